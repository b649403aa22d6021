/**
 * Deletes too large for one statement, run in steps between requests, and the schedule that
 * starts them from a request path. better-sqlite3 is synchronous: one statement deleting
 * everything would stop the process, and hold the file's write lock (which other processes'
 * writes wait for), as long as all of it takes.
 */

/** Rows a step of deleteInSteps deletes at most (≈1.5 ms of a worker's time for small rows). */
export const DELETE_STEP = 1000;

/**
 * A large delete in steps: runs `step(limit)` (one statement that deletes at most `limit` rows
 * and returns how many it deleted) at once, and again after each turn of the event loop while it
 * deleted a full step, until it deletes fewer or `stopped()` is true.
 */
export async function deleteInSteps(step: (limit: number) => number, stopped: () => boolean = () => false): Promise<void> {
  while (!stopped() && step(DELETE_STEP) === DELETE_STEP) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * A delete over a whole table in steps of its key order, for rows no index finds (an index would
 * cost every write of the table): `stepEnd(after, limit)` is the key `limit` rows on from `after`
 * (the last key when fewer are left, null when none), and `sweep(after, last)` deletes what is
 * due in the keys after `after` up to `last`. Starting at `start`, runs a step at once and the
 * next after each turn of the event loop, until the table ends or `stopped()` is true. Each step
 * reads `size` rows, however few it deletes, so a sweep costs a read of the whole table: run it
 * seldom.
 */
export async function sweepInSteps<K>(
  start: K,
  stepEnd: (after: K, limit: number) => K | null,
  sweep: (after: K, last: K) => void,
  stopped: () => boolean = () => false,
  size = DELETE_STEP,
): Promise<void> {
  let after = start;
  while (!stopped()) {
    const last = stepEnd(after, size);
    if (last === null) return;
    sweep(after, last);
    after = last;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * A cleanup started from a request path now and then: `maybeRun(now)` starts `run(now)` when none
 * is under way and the last one started at least `everyMs` before `now`. Its first step runs
 * within the call (the request that started it pays for one step), the others between requests.
 * A failure ends it quietly: a cleanup never fails the request, and the next one takes what is
 * left.
 */
export class CleanupSchedule {
  private last = 0;
  private running = false;

  constructor(
    private readonly everyMs: number,
    private readonly run: (now: number) => Promise<void>,
  ) {}

  maybeRun(now: number): void {
    if (this.running || now - this.last < this.everyMs) return;
    this.last = now;
    this.running = true;
    this.run(now)
      .catch(() => {})
      .finally(() => {
        this.running = false;
      });
  }
}
