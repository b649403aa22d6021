import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { NotFoundError } from '../errors';
import { migrateSqlite } from '../data-version/sqlite-data-version';
import { openSqlite, type SqliteDatabase } from '../sqlite';
import { CleanupSchedule, deleteInSteps } from '../sqlite-cleanup';
import type { ProjectId } from '../types';
import { backoffDelayMs, type FailedJob, type JobHandler, type JobQueue, type JobQueueCounts, type QueueJob, type RetryPolicy } from './job-queue';

export interface EmbeddedJobQueueOptions extends RetryPolicy {
  /** SQLite file holding the outbox (standalone: `${PLINTH_DATA_DIR}/mailer.db`), or `:memory:`. */
  file: string;
  /** Longest idle wait between looks at the outbox; enqueues on this instance wake it at once. Default 1000. */
  pollMs?: number;
  /**
   * How long a claimed job is reserved for its consumer. The lease is renewed while the handler
   * runs; if the process dies, another consumer takes the job once the lease lapses. Default 30 s.
   */
  leaseMs?: number;
  /** Jobs delivered at once. Default 4. */
  concurrency?: number;
  /** How long delivered jobs are kept (the idempotency window). Default 7 days. */
  retentionMs?: number;
  logger?: Logger;
}

interface ClaimedRow {
  id: string;
  job: string;
  attempts_made: number;
  max_attempts: number;
  backoff_ms: number;
  claim: string;
}

interface FailedRow {
  job: string;
  attempts_made: number;
  last_error: string | null;
  failed_at: number;
}

/** The table of one queue; a queue owns its table (and the names of its indexes). */
const schema = (table: string) => `
CREATE TABLE IF NOT EXISTS ${table} (
  id            TEXT PRIMARY KEY,
  project       TEXT NOT NULL,
  job           TEXT NOT NULL,
  state         TEXT NOT NULL CHECK (state IN ('waiting', 'active', 'done', 'failed')),
  attempts_made INTEGER NOT NULL DEFAULT 0,
  max_attempts  INTEGER NOT NULL,
  backoff_ms    INTEGER NOT NULL,
  run_at        INTEGER NOT NULL,
  lease_until   INTEGER,
  claim         TEXT,
  last_error    TEXT,
  enqueued_at   INTEGER NOT NULL,
  failed_at     INTEGER,
  finished_at   INTEGER
);
CREATE INDEX IF NOT EXISTS ${table}_due ON ${table} (state, run_at);
CREATE INDEX IF NOT EXISTS ${table}_lease ON ${table} (state, lease_until);
CREATE INDEX IF NOT EXISTS ${table}_failed ON ${table} (project, state, failed_at);
CREATE INDEX IF NOT EXISTS ${table}_finished ON ${table} (state, finished_at);
`;

const PRUNE_EVERY_MS = 60_000;
/** Longest wait between two tries of the outbox while its database refuses writes (disk full…). */
const MAX_STORAGE_BACKOFF_MS = 30_000;
const MAX_ERROR_LENGTH = 1000;

function errorMessage(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.slice(0, MAX_ERROR_LENGTH);
}

/** What a queue needs to know about its jobs. */
export interface EmbeddedJobKind<J extends QueueJob> {
  /** The table of this queue (e.g. `mail_outbox`). Renaming it strands queued jobs. */
  table: string;
  /** Its data version's component (`mail-queue`, `webhook-queue`): the table's migrations, if it ever has any, are this queue's. */
  component: string;
  /** What the jobs are, in log lines (`mail`, `webhook`). */
  label: string;
  /** Throws a TypeError naming the bad field unless `job` is well-formed. */
  validate: (job: unknown) => asserts job is J;
}

/**
 * The standalone JobQueue: a durable outbox table in SQLite and an in-process poll loop, with
 * the same retry, backoff and dead-letter semantics as the BullMQ adapter. Rows move
 * waiting → active (leased) → done | waiting (retry, `run_at` pushed by the backoff) | failed.
 * A lease that lapses (its process died mid-delivery) makes the job claimable again.
 */
export class EmbeddedJobQueue<J extends QueueJob> implements JobQueue<J> {
  private readonly db: SqliteDatabase;
  private readonly policy: RetryPolicy;
  private readonly pollMs: number;
  private readonly leaseMs: number;
  private readonly concurrency: number;
  private readonly retentionMs: number;
  private readonly logger?: Logger;

  private handler: JobHandler<J> | null = null;
  private loop: Promise<void> | null = null;
  private readonly inflight = new Set<Promise<void>>();
  private wakeUp: (() => void) | null = null;
  private closed = false;
  /**
   * Delivered jobs past the retention, deleted once a minute through an index, in steps between
   * the loop's turns: a burst of jobs a week ago is not deleted in one statement.
   */
  private readonly prunes = new CleanupSchedule(PRUNE_EVERY_MS, (now) =>
    deleteInSteps((limit) => this.stmt.prune.run(now - this.retentionMs, limit).changes, () => this.closed),
  );
  /** Consecutive failed writes to the outbox; the poll loop backs off exponentially while > 0. */
  private storageFailures = 0;
  /**
   * Jobs delivered whose `done` state could not be written yet (the disk refused it): never
   * handed out again by this consumer, and recorded as soon as the database takes writes again.
   */
  private readonly unrecorded = new Map<string, string>();

  private readonly stmt;

  private readonly kind: EmbeddedJobKind<J>;

  constructor(opts: EmbeddedJobQueueOptions, kind: EmbeddedJobKind<J>) {
    if (!/^[a-z][a-z0-9_]{0,62}$/.test(kind.table)) throw new TypeError(`Invalid queue table name ${kind.table}.`);
    this.kind = kind;
    this.policy = { attempts: opts.attempts, backoffMs: opts.backoffMs };
    this.pollMs = opts.pollMs ?? 1000;
    this.leaseMs = opts.leaseMs ?? 30_000;
    this.concurrency = opts.concurrency ?? 4;
    this.retentionMs = opts.retentionMs ?? 7 * 24 * 3600 * 1000;
    this.logger = opts.logger;
    this.db = openSqlite(opts.file);
    migrateSqlite(this.db, { component: kind.component, where: this.db.name, baseline: (db) => db.exec(schema(kind.table)), migrations: [] });
    const t = kind.table;
    this.stmt = {
      insert: this.db.prepare(
        `INSERT INTO ${t} (id, project, job, state, max_attempts, backoff_ms, run_at, enqueued_at)
         VALUES (@id, @project, @job, 'waiting', @attempts, @backoffMs, @now, @now)
         ON CONFLICT (id) DO NOTHING`,
      ),
      claim: this.db.prepare(
        // Two index lookups, never a scan: a lapsed lease first, else the longest-due waiting job
        // (one OR over both made SQLite sort every row: 2 ms a claim with 1,000 retrying jobs).
        `UPDATE ${t} SET state = 'active', lease_until = @leaseUntil, claim = @claim
         WHERE id = coalesce(
           (SELECT id FROM ${t} WHERE state = 'active' AND lease_until <= @now
              AND id NOT IN (SELECT value FROM json_each(@skip)) ORDER BY lease_until LIMIT 1),
           (SELECT id FROM ${t} WHERE state = 'waiting' AND run_at <= @now
              AND id NOT IN (SELECT value FROM json_each(@skip)) ORDER BY run_at, rowid LIMIT 1))
         RETURNING id, job, attempts_made, max_attempts, backoff_ms, claim`,
      ),
      renew: this.db.prepare(
        `UPDATE ${t} SET lease_until = @leaseUntil WHERE id = @id AND claim = @claim AND state = 'active'`,
      ),
      complete: this.db.prepare(
        `UPDATE ${t} SET state = 'done', finished_at = @now, lease_until = NULL, claim = NULL
         WHERE id = @id AND claim = @claim`,
      ),
      retryLater: this.db.prepare(
        `UPDATE ${t} SET state = 'waiting', attempts_made = @attemptsMade, run_at = @runAt,
           last_error = @error, lease_until = NULL, claim = NULL
         WHERE id = @id AND claim = @claim`,
      ),
      deadLetter: this.db.prepare(
        `UPDATE ${t} SET state = 'failed', attempts_made = @attemptsMade, failed_at = @now,
           last_error = @error, lease_until = NULL, claim = NULL
         WHERE id = @id AND claim = @claim`,
      ),
      nextDue: this.db.prepare(
        `SELECT MIN(CASE state WHEN 'waiting' THEN run_at ELSE lease_until END) AS due
         FROM ${t} WHERE state IN ('waiting', 'active')`,
      ),
      listFailed: this.db.prepare(
        `SELECT job, attempts_made, last_error, failed_at FROM ${t}
         WHERE project = ? AND state = 'failed' ORDER BY failed_at DESC, rowid DESC`,
      ),
      retryFailed: this.db.prepare(
        `UPDATE ${t} SET state = 'waiting', attempts_made = 0, run_at = @now, failed_at = NULL
         WHERE project = @project AND id = @id AND state = 'failed'`,
      ),
      counts: this.db.prepare(`SELECT state, COUNT(*) AS n FROM ${t} GROUP BY state`),
      prune: this.db.prepare(
        `DELETE FROM ${t} WHERE id IN (SELECT id FROM ${t} WHERE state = 'done' AND finished_at < ? LIMIT ?)`,
      ),
      purge: this.db.prepare(`DELETE FROM ${t} WHERE project = ?`),
    };
  }

  async enqueue(job: J): Promise<void> {
    this.kind.validate(job);
    this.assertOpen();
    this.stmt.insert.run({
      id: job.id,
      project: job.project,
      job: JSON.stringify(job),
      attempts: this.policy.attempts,
      backoffMs: this.policy.backoffMs,
      now: Date.now(),
    });
    this.wakeUp?.();
  }

  start(handler: JobHandler<J>): void {
    this.assertOpen();
    if (this.handler) throw new Error('The queue consumer is already started.');
    this.handler = handler;
    this.loop = this.run(handler);
  }

  async stop(): Promise<void> {
    this.handler = null;
    this.wakeUp?.();
    await this.loop;
    this.loop = null;
    await Promise.allSettled([...this.inflight]);
  }

  async listFailed(project: ProjectId): Promise<FailedJob<J>[]> {
    this.assertOpen();
    const rows = this.stmt.listFailed.all(project) as FailedRow[];
    return rows.map((row) => ({
      job: JSON.parse(row.job) as J,
      attempts: row.attempts_made,
      error: row.last_error ?? '',
      failed_at: new Date(row.failed_at).toISOString(),
    }));
  }

  async purgeProject(project: ProjectId): Promise<void> {
    this.assertOpen();
    // An in-flight delivery's completion then updates no row: nothing of the project remains.
    this.stmt.purge.run(project);
  }

  async retryFailed(project: ProjectId, id: string): Promise<void> {
    this.assertOpen();
    const { changes } = this.stmt.retryFailed.run({ project, id, now: Date.now() });
    if (changes === 0) throw new NotFoundError(`No failed job ${id}.`, { id });
    this.wakeUp?.();
  }

  async counts(): Promise<JobQueueCounts> {
    this.assertOpen();
    const counts: JobQueueCounts = { waiting: 0, active: 0, failed: 0 };
    for (const row of this.stmt.counts.all() as { state: string; n: number }[]) {
      if (row.state === 'waiting' || row.state === 'active' || row.state === 'failed') counts[row.state] = row.n;
    }
    return counts;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.stop();
    this.closed = true;
    this.db.close();
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('The queue is closed.');
  }

  /**
   * The poll loop: claim what is due up to the concurrency, then sleep until woken or due.
   * When the database refuses a write (disk full, I/O error), nothing is delivered from that
   * failed claim and the loop backs off exponentially (pollMs, 2×, 4× … up to 30 s).
   */
  private async run(handler: JobHandler<J>): Promise<void> {
    while (this.handler === handler) {
      try {
        this.pollOnce(handler);
        this.storageFailures = 0;
      } catch (err) {
        this.storageFailures += 1;
        this.logger?.error({ err: errorMessage(err), failures: this.storageFailures }, `${this.kind.label} outbox write failed; backing off`);
      }
      await this.sleep(this.storageFailures > 0 ? this.storageBackoffMs() : this.idleWaitMs());
    }
  }

  private storageBackoffMs(): number {
    return Math.min(MAX_STORAGE_BACKOFF_MS, this.pollMs * 2 ** Math.min(this.storageFailures - 1, 16));
  }

  /** One pass: record pending completions, prune, claim. Throws when the database refuses a write. */
  private pollOnce(handler: JobHandler<J>): void {
    for (const [id, claim] of this.unrecorded) {
      this.stmt.complete.run({ id, claim, now: Date.now() });
      this.unrecorded.delete(id);
    }
    const now = Date.now();
    this.prunes.maybeRun(now);
    while (this.inflight.size < this.concurrency) {
      // `.all()`, not `.get()`: `.get()` returns the RETURNING row after the first step and
      // drops an error raised when the UPDATE commits, so a claim that was never written
      // looked taken and the same job was handed out again and again.
      const [row] = this.stmt.claim.all({
        now,
        leaseUntil: now + this.leaseMs,
        claim: randomBytes(9).toString('base64url'),
        skip: JSON.stringify([...this.unrecorded.keys()]),
      }) as ClaimedRow[];
      if (!row) break;
      const delivery: Promise<void> = this.deliver(handler, row).finally(() => {
        this.inflight.delete(delivery);
        this.wakeUp?.();
      });
      this.inflight.add(delivery);
    }
  }

  private idleWaitMs(): number {
    if (this.inflight.size >= this.concurrency) return this.pollMs;
    const { due } = this.stmt.nextDue.get() as { due: number | null };
    if (due === null) return this.pollMs;
    return Math.max(0, Math.min(this.pollMs, due - Date.now()));
  }

  /** Waits `ms`, or less when `wakeUp` is called (an enqueue, a delivery settling, stop). */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.wakeUp = null;
        resolve();
      };
      const timer = setTimeout(finish, ms);
      this.wakeUp = finish;
    });
  }

  private async deliver(handler: JobHandler<J>, row: ClaimedRow): Promise<void> {
    const key = { id: row.id, claim: row.claim };
    const heartbeat = setInterval(() => {
      try {
        this.stmt.renew.run({ ...key, leaseUntil: Date.now() + this.leaseMs });
      } catch (err) {
        this.logger?.warn({ job_id: row.id, err: errorMessage(err) }, `${this.kind.label} job lease not renewed`);
      }
    }, Math.max(10, Math.floor(this.leaseMs / 3)));
    heartbeat.unref();
    let delivered = false;
    try {
      const job = JSON.parse(row.job) as J;
      await handler(job, { attempt: row.attempts_made + 1, attempts: row.max_attempts });
      delivered = true;
      this.stmt.complete.run({ ...key, now: Date.now() });
    } catch (err) {
      if (delivered) {
        // Sent, but `done` was not written: keep it from being sent again, record it later.
        this.unrecorded.set(row.id, row.claim);
        this.storageFailures += 1;
        this.logger?.error({ job_id: row.id, err: errorMessage(err) }, `${this.kind.label} sent but its state could not be written`);
        return;
      }
      this.recordFailure(row, key, errorMessage(err));
    } finally {
      clearInterval(heartbeat);
    }
  }

  /**
   * Schedules the retry or dead-letters the job. If even that cannot be written, the job keeps
   * its lease and is tried again once the lease lapses (a back-off of `leaseMs`).
   */
  private recordFailure(row: ClaimedRow, key: { id: string; claim: string }, error: string): void {
    const attemptsMade = row.attempts_made + 1;
    try {
      if (attemptsMade >= row.max_attempts) {
        this.stmt.deadLetter.run({ ...key, attemptsMade, error, now: Date.now() });
        this.logger?.warn({ job_id: row.id, attempts: attemptsMade, error }, `${this.kind.label} job dead-lettered`);
      } else {
        const runAt = Date.now() + backoffDelayMs({ attempts: row.max_attempts, backoffMs: row.backoff_ms }, attemptsMade);
        this.stmt.retryLater.run({ ...key, attemptsMade, error, runAt });
      }
    } catch (err) {
      this.storageFailures += 1;
      this.logger?.error({ job_id: row.id, err: errorMessage(err) }, `${this.kind.label} job failure could not be recorded; retried after its lease`);
    }
  }
}
