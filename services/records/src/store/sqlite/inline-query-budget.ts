/**
 * When a query may run on the event loop before it goes to a reader thread. Posting a query to a
 * reader and its rows back costs more than most queries (an index search returning a page), so a
 * query first runs on the event loop for at most `sliceMs`; one that has not finished by then is
 * stopped there and run again on a reader. Overruns together may take at most `maxShare` of each
 * second of the event loop: past that, every query goes straight to a reader until the second is
 * over. (Remembering slow query texts instead measured worse: a query's first runs after start —
 * cold cache, cold JIT — overrun too, and sent the commonest query to the readers for good.)
 */
export interface InlineQueryBudgetOptions {
  /** Longest a query runs on the event loop before it moves to a reader (ms); 0: never. */
  sliceMs: number;
  /** Share of each second that overruns may take, 0–1 (default 0.05). */
  maxShare?: number;
  now?: () => number;
}

const WINDOW_MS = 1000;

export class InlineQueryBudget {
  readonly sliceMs: number;
  private readonly maxSpentMs: number;
  private readonly now: () => number;
  private windowStart = -Infinity;
  private spentMs = 0;

  constructor(opts: InlineQueryBudgetOptions) {
    this.sliceMs = opts.sliceMs;
    this.maxSpentMs = WINDOW_MS * (opts.maxShare ?? 0.05);
    this.now = opts.now ?? Date.now;
  }

  /** Whether a query may start on the event loop now. */
  allows(): boolean {
    if (this.sliceMs <= 0) return false;
    const now = this.now();
    if (now - this.windowStart >= WINDOW_MS) {
      this.windowStart = now;
      this.spentMs = 0;
    }
    return this.spentMs < this.maxSpentMs;
  }

  /** A query that started on the event loop ran `ms` there and did not finish. */
  overran(ms: number): void {
    this.spentMs += ms;
  }
}
