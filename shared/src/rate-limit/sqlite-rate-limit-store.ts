import { WriteRetry, type SqliteDatabase } from '../sqlite';
import { CleanupSchedule, sweepInSteps } from '../sqlite-cleanup';

/** One counter: hits so far in the current window and when the window ends. */
export interface RateLimitHits {
  totalHits: number;
  resetTime: Date;
}

export interface SqliteRateLimitStoreOptions {
  /**
   * Hits this process may count in memory before it writes them (0, the default: every hit is
   * written at once, and every process sees every hit). With `n`, a key's count in this process
   * is the shared count it last read plus at most `n` of its own unwritten hits, so the other
   * processes may let through up to `n` more each before they see them. Set it to a small share
   * of the limit (records: 1 %): a write per request was the largest cost of a cheap request.
   */
  localBatch?: number;
  /** Unwritten hits are written at the latest this often (ms, default 20). */
  flushMs?: number;
  /**
   * The limit the counters are checked against, if one: a key whose shared count is already
   * over it (its caller is being refused) has its hits written only every `flushMs`, not every
   * `localBatch` — a flood of refused requests then costs a write per 20 ms, not one per batch.
   */
  limit?: number;
  /** A hit starts a sweep of the ended windows when the last one started this long ago (ms, default 60 000). */
  sweepEveryMs?: number;
}

/** A key's hits counted in this process and not written yet, beside the shared count last read. */
interface LocalCount {
  pending: number;
  known: number;
  resetAt: number;
}

/** Keys kept in memory at most; past that every pending hit is written and the map starts over. */
const MAX_LOCAL_KEYS = 10_000;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS rate_limits (
  key TEXT PRIMARY KEY,
  hits INTEGER NOT NULL,
  reset_at INTEGER NOT NULL
) WITHOUT ROWID;
`;

/**
 * Fixed-window hit counters in SQLite, shared by every process on the same file (standalone
 * workers). Each write is ONE statement — an upsert that starts a new window when the old one
 * has ended — so it takes the write lock up front and never fails for contention alone; a batch
 * of keys is one immediate transaction. With `localBatch`, hits are counted in memory and
 * written together (when a key has that many, and every `flushMs`). Implements
 * express-rate-limit's `Store` shape (`init`, `get`, `increment`, `decrement`, `resetKey`,
 * `shutdown`); `prefix` keeps limiters on one table apart.
 */
export class SqliteRateLimitStore {
  private windowMs = 60_000;
  private readonly stmt;
  /** Sweeps of the ended windows (sweepEnded). */
  private readonly sweeps: CleanupSchedule;
  private readonly writes: WriteRetry;
  private readonly localBatch: number;
  private readonly flushMs: number;
  private readonly limit: number;
  private readonly local = new Map<string, LocalCount>();
  private timer: NodeJS.Timeout | null = null;
  /** express-rate-limit: the counts are shared, not per process. */
  readonly localKeys = false;

  constructor(
    private readonly db: SqliteDatabase,
    readonly prefix: string,
    opts: SqliteRateLimitStoreOptions = {},
  ) {
    db.exec(SCHEMA);
    this.writes = new WriteRetry(db);
    this.localBatch = Math.max(0, Math.floor(opts.localBatch ?? 0));
    this.flushMs = opts.flushMs ?? 20;
    this.limit = opts.limit ?? Infinity;
    this.sweeps = new CleanupSchedule(opts.sweepEveryMs ?? 60_000, () => this.sweepEnded());
    this.stmt = {
      add: db.prepare(
        `INSERT INTO rate_limits (key, hits, reset_at) VALUES (@key, @n, @resetAt)
         ON CONFLICT (key) DO UPDATE SET
           hits = CASE WHEN reset_at <= @now THEN @n ELSE hits + @n END,
           reset_at = CASE WHEN reset_at <= @now THEN @resetAt ELSE reset_at END
         RETURNING hits, reset_at`,
      ),
      get: db.prepare('SELECT hits, reset_at FROM rate_limits WHERE key = ? AND reset_at > ?'),
      decrement: db.prepare('UPDATE rate_limits SET hits = max(hits - 1, 0) WHERE key = ? AND reset_at > ?'),
      reset: db.prepare('DELETE FROM rate_limits WHERE key = ?'),
      stepEnd: db.prepare<[string, number], { last: string | null }>(
        'SELECT max(key) AS last FROM (SELECT key FROM rate_limits WHERE key > ? ORDER BY key LIMIT ?)',
      ),
      sweep: db.prepare<[string, string, number]>('DELETE FROM rate_limits WHERE key > ? AND key <= ? AND reset_at <= ?'),
    };
  }

  init(options: { windowMs: number }): void {
    this.windowMs = options.windowMs;
  }

  get(key: string): RateLimitHits | undefined {
    const k = this.prefix + key;
    this.flushKeys([k]);
    const row = this.stmt.get.get(k, Date.now()) as { hits: number; reset_at: number } | undefined;
    return row ? { totalHits: row.hits, resetTime: new Date(row.reset_at) } : undefined;
  }

  increment(key: string): RateLimitHits {
    const k = this.prefix + key;
    const now = Date.now();
    this.sweeps.maybeRun(now);
    if (this.localBatch === 0) {
      const row = this.add(k, 1, now);
      return { totalHits: row.hits, resetTime: new Date(row.reset_at) };
    }
    const count = this.local.get(k);
    // A key new to this process (or whose window ended) is written at once: that reads the
    // shared count and window. Hits counted for an ended window are dropped with it.
    if (!count || count.resetAt <= now) {
      if (this.local.size >= MAX_LOCAL_KEYS) this.flushAllOrForget();
      const row = this.add(k, 1, now);
      this.local.set(k, { pending: 0, known: row.hits, resetAt: row.reset_at });
      return { totalHits: row.hits, resetTime: new Date(row.reset_at) };
    }
    count.pending++;
    if (count.pending >= this.localBatch && count.known <= this.limit) this.flushKeys([k]);
    else this.timer ??= setTimeout(() => this.onTimer(), this.flushMs).unref();
    return { totalHits: count.known + count.pending, resetTime: new Date(count.resetAt) };
  }

  decrement(key: string): void {
    const count = this.local.get(this.prefix + key);
    if (count && count.pending > 0) {
      count.pending--;
      return;
    }
    this.stmt.decrement.run(this.prefix + key, Date.now());
  }

  resetKey(key: string): void {
    this.local.delete(this.prefix + key);
    this.stmt.reset.run(this.prefix + key);
  }

  /** Writes what this process still holds (express-rate-limit calls it when a limiter stops). */
  shutdown(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.db.open) this.flushAll(true);
  }

  /**
   * Deletes the counters of ended windows (every store's, as they share the table), started by a
   * hit at most once every `sweepEveryMs` (CleanupSchedule), in steps of the table's key order
   * (sweepInSteps). One DELETE over the whole table would read every key inside that hit (≈30 ms
   * at 1M keys, which callers who make up addresses or e-mails can reach), and an index on
   * `reset_at` would make every hit's write cost more.
   */
  private sweepEnded(): Promise<void> {
    return sweepInSteps(
      '',
      (after, limit) => this.stmt.stepEnd.get(after, limit)?.last ?? null,
      (after, last) => this.stmt.sweep.run(after, last, Date.now()),
      () => !this.db.open,
    );
  }

  private add(key: string, n: number, now: number): { hits: number; reset_at: number } {
    return this.writes.run(() => this.stmt.add.get({ key, n, now, resetAt: now + this.windowMs })) as { hits: number; reset_at: number };
  }

  private onTimer(): void {
    this.timer = null;
    if (!this.db.open) return;
    try {
      this.flushAll(false);
    } catch {
      // The file is busy or unwritable: the hits stay pending, and the next hit or timer retries.
      this.timer = setTimeout(() => this.onTimer(), this.flushMs).unref();
    }
  }

  /** Writes the pending hits of `keys` in one transaction and learns their shared counts. */
  private flushKeys(keys: string[]): void {
    const now = Date.now();
    const due = keys.filter((k) => (this.local.get(k)?.pending ?? 0) > 0);
    if (due.length === 0) return;
    const adds = due.map((k) => ({ key: k, n: this.local.get(k)!.pending, now, resetAt: now + this.windowMs }));
    const rows = this.writes.run(() =>
      this.db.transaction(() => adds.map((add) => this.stmt.add.get(add) as { hits: number; reset_at: number })).immediate(),
    );
    // Only once they are committed: a failed write keeps the hits pending.
    adds.forEach((add, i) => {
      const count = this.local.get(add.key)!;
      count.pending -= add.n;
      count.known = rows[i]!.hits;
      count.resetAt = rows[i]!.reset_at;
    });
  }

  /**
   * Writes every pending hit and forgets every key; when the file cannot be written (a full
   * disk), the hits are forgotten all the same, so the map stays bounded.
   */
  private flushAllOrForget(): void {
    try {
      this.flushAll(true);
    } finally {
      this.local.clear();
    }
  }

  /** Writes every pending hit; forgets ended windows (and, with `clear`, every key). */
  private flushAll(clear: boolean): void {
    this.flushKeys([...this.local.keys()]);
    const now = Date.now();
    for (const [k, count] of this.local) if (clear || count.resetAt <= now) this.local.delete(k);
  }
}
