import { WriteRetry, type SqliteDatabase } from '../sqlite';

/** One counter: hits so far in the current window and when the window ends. */
export interface RateLimitHits {
  totalHits: number;
  resetTime: Date;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS rate_limits (
  key TEXT PRIMARY KEY,
  hits INTEGER NOT NULL,
  reset_at INTEGER NOT NULL
) WITHOUT ROWID;
`;

/**
 * Fixed-window hit counters in SQLite, shared by every process on the same file (standalone
 * workers). Each call is ONE statement — an upsert that starts a new window when the old one
 * has ended — so it takes the write lock up front and never fails for contention alone.
 * Implements express-rate-limit's `Store` shape (`init`, `get`, `increment`, `decrement`,
 * `resetKey`); `prefix` keeps limiters on one table apart.
 */
export class SqliteRateLimitStore {
  private windowMs = 60_000;
  private readonly stmt;
  private calls = 0;
  private readonly writes: WriteRetry;
  /** express-rate-limit: the counts are shared, not per process. */
  readonly localKeys = false;

  constructor(
    db: SqliteDatabase,
    readonly prefix: string,
  ) {
    db.exec(SCHEMA);
    this.writes = new WriteRetry(db);
    this.stmt = {
      increment: db.prepare(
        `INSERT INTO rate_limits (key, hits, reset_at) VALUES (@key, 1, @resetAt)
         ON CONFLICT (key) DO UPDATE SET
           hits = CASE WHEN reset_at <= @now THEN 1 ELSE hits + 1 END,
           reset_at = CASE WHEN reset_at <= @now THEN @resetAt ELSE reset_at END
         RETURNING hits, reset_at`,
      ),
      get: db.prepare('SELECT hits, reset_at FROM rate_limits WHERE key = ? AND reset_at > ?'),
      decrement: db.prepare('UPDATE rate_limits SET hits = max(hits - 1, 0) WHERE key = ? AND reset_at > ?'),
      reset: db.prepare('DELETE FROM rate_limits WHERE key = ?'),
      prune: db.prepare('DELETE FROM rate_limits WHERE reset_at <= ?'),
    };
  }

  init(options: { windowMs: number }): void {
    this.windowMs = options.windowMs;
  }

  get(key: string): RateLimitHits | undefined {
    const row = this.stmt.get.get(this.prefix + key, Date.now()) as { hits: number; reset_at: number } | undefined;
    return row ? { totalHits: row.hits, resetTime: new Date(row.reset_at) } : undefined;
  }

  increment(key: string): RateLimitHits {
    const now = Date.now();
    if (++this.calls % 1000 === 0) this.stmt.prune.run(now);
    const args = { key: this.prefix + key, now, resetAt: now + this.windowMs };
    const row = this.writes.run(() => this.stmt.increment.get(args)) as { hits: number; reset_at: number };
    return { totalHits: row.hits, resetTime: new Date(row.reset_at) };
  }

  decrement(key: string): void {
    this.stmt.decrement.run(this.prefix + key, Date.now());
  }

  resetKey(key: string): void {
    this.stmt.reset.run(this.prefix + key);
  }
}
