import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { NotFoundError } from '../errors';
import { openSqlite, type SqliteDatabase } from '../sqlite';
import type { ProjectId } from '../types';
import { assertMailJob, type MailJob } from './mail-job';
import {
  backoffDelayMs,
  type FailedMailJob,
  type MailHandler,
  type MailQueue,
  type MailQueueCounts,
  type MailRetryPolicy,
} from './mail-queue';

export interface EmbeddedMailQueueOptions extends MailRetryPolicy {
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

const SCHEMA = `
CREATE TABLE IF NOT EXISTS mail_outbox (
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
CREATE INDEX IF NOT EXISTS mail_outbox_due ON mail_outbox (state, run_at);
CREATE INDEX IF NOT EXISTS mail_outbox_failed ON mail_outbox (project, state, failed_at);
`;

const PRUNE_EVERY_MS = 60_000;
const MAX_ERROR_LENGTH = 1000;

function errorMessage(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.slice(0, MAX_ERROR_LENGTH);
}

/**
 * The standalone MailQueue: a durable outbox table in SQLite and an in-process poll loop, with
 * the same retry, backoff and dead-letter semantics as the BullMQ adapter. Rows move
 * waiting → active (leased) → done | waiting (retry, `run_at` pushed by the backoff) | failed.
 * A lease that lapses (its process died mid-delivery) makes the job claimable again.
 */
export class EmbeddedMailQueue implements MailQueue {
  private readonly db: SqliteDatabase;
  private readonly policy: MailRetryPolicy;
  private readonly pollMs: number;
  private readonly leaseMs: number;
  private readonly concurrency: number;
  private readonly retentionMs: number;
  private readonly logger?: Logger;

  private handler: MailHandler | null = null;
  private loop: Promise<void> | null = null;
  private readonly inflight = new Set<Promise<void>>();
  private wakeUp: (() => void) | null = null;
  private lastPrune = 0;
  private closed = false;

  private readonly stmt;

  constructor(opts: EmbeddedMailQueueOptions) {
    this.policy = { attempts: opts.attempts, backoffMs: opts.backoffMs };
    this.pollMs = opts.pollMs ?? 1000;
    this.leaseMs = opts.leaseMs ?? 30_000;
    this.concurrency = opts.concurrency ?? 4;
    this.retentionMs = opts.retentionMs ?? 7 * 24 * 3600 * 1000;
    this.logger = opts.logger;
    this.db = openSqlite(opts.file);
    this.db.exec(SCHEMA);
    this.stmt = {
      insert: this.db.prepare(
        `INSERT INTO mail_outbox (id, project, job, state, max_attempts, backoff_ms, run_at, enqueued_at)
         VALUES (@id, @project, @job, 'waiting', @attempts, @backoffMs, @now, @now)
         ON CONFLICT (id) DO NOTHING`,
      ),
      claim: this.db.prepare(
        `UPDATE mail_outbox SET state = 'active', lease_until = @leaseUntil, claim = @claim
         WHERE id = (SELECT id FROM mail_outbox
                     WHERE (state = 'waiting' AND run_at <= @now) OR (state = 'active' AND lease_until <= @now)
                     ORDER BY run_at, rowid LIMIT 1)
         RETURNING id, job, attempts_made, max_attempts, backoff_ms, claim`,
      ),
      renew: this.db.prepare(
        `UPDATE mail_outbox SET lease_until = @leaseUntil WHERE id = @id AND claim = @claim AND state = 'active'`,
      ),
      complete: this.db.prepare(
        `UPDATE mail_outbox SET state = 'done', finished_at = @now, lease_until = NULL, claim = NULL
         WHERE id = @id AND claim = @claim`,
      ),
      retryLater: this.db.prepare(
        `UPDATE mail_outbox SET state = 'waiting', attempts_made = @attemptsMade, run_at = @runAt,
           last_error = @error, lease_until = NULL, claim = NULL
         WHERE id = @id AND claim = @claim`,
      ),
      deadLetter: this.db.prepare(
        `UPDATE mail_outbox SET state = 'failed', attempts_made = @attemptsMade, failed_at = @now,
           last_error = @error, lease_until = NULL, claim = NULL
         WHERE id = @id AND claim = @claim`,
      ),
      nextDue: this.db.prepare(
        `SELECT MIN(CASE state WHEN 'waiting' THEN run_at ELSE lease_until END) AS due
         FROM mail_outbox WHERE state IN ('waiting', 'active')`,
      ),
      listFailed: this.db.prepare(
        `SELECT job, attempts_made, last_error, failed_at FROM mail_outbox
         WHERE project = ? AND state = 'failed' ORDER BY failed_at DESC, rowid DESC`,
      ),
      retryFailed: this.db.prepare(
        `UPDATE mail_outbox SET state = 'waiting', attempts_made = 0, run_at = @now, failed_at = NULL
         WHERE project = @project AND id = @id AND state = 'failed'`,
      ),
      counts: this.db.prepare(`SELECT state, COUNT(*) AS n FROM mail_outbox GROUP BY state`),
      prune: this.db.prepare(`DELETE FROM mail_outbox WHERE state = 'done' AND finished_at < ?`),
      purge: this.db.prepare(`DELETE FROM mail_outbox WHERE project = ?`),
    };
  }

  async enqueue(job: MailJob): Promise<void> {
    assertMailJob(job);
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

  start(handler: MailHandler): void {
    this.assertOpen();
    if (this.handler) throw new Error('The mail queue consumer is already started.');
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

  async listFailed(project: ProjectId): Promise<FailedMailJob[]> {
    this.assertOpen();
    const rows = this.stmt.listFailed.all(project) as FailedRow[];
    return rows.map((row) => ({
      job: JSON.parse(row.job) as MailJob,
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
    if (changes === 0) throw new NotFoundError(`No failed mail job ${id}.`, { id });
    this.wakeUp?.();
  }

  async counts(): Promise<MailQueueCounts> {
    this.assertOpen();
    const counts: MailQueueCounts = { waiting: 0, active: 0, failed: 0 };
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
    if (this.closed) throw new Error('The mail queue is closed.');
  }

  /** The poll loop: claim what is due up to the concurrency, then sleep until woken or due. */
  private async run(handler: MailHandler): Promise<void> {
    while (this.handler === handler) {
      const now = Date.now();
      if (now - this.lastPrune >= PRUNE_EVERY_MS) {
        this.lastPrune = now;
        this.stmt.prune.run(now - this.retentionMs);
      }
      while (this.inflight.size < this.concurrency) {
        const row = this.stmt.claim.get({ now, leaseUntil: now + this.leaseMs, claim: randomBytes(9).toString('base64url') }) as
          | ClaimedRow
          | undefined;
        if (!row) break;
        const delivery: Promise<void> = this.deliver(handler, row).finally(() => {
          this.inflight.delete(delivery);
          this.wakeUp?.();
        });
        this.inflight.add(delivery);
      }
      await this.sleep(this.idleWaitMs());
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

  private async deliver(handler: MailHandler, row: ClaimedRow): Promise<void> {
    const key = { id: row.id, claim: row.claim };
    const heartbeat = setInterval(() => {
      this.stmt.renew.run({ ...key, leaseUntil: Date.now() + this.leaseMs });
    }, Math.max(10, Math.floor(this.leaseMs / 3)));
    heartbeat.unref();
    try {
      const job = JSON.parse(row.job) as MailJob;
      await handler(job, { attempt: row.attempts_made + 1, attempts: row.max_attempts });
      this.stmt.complete.run({ ...key, now: Date.now() });
    } catch (err) {
      const attemptsMade = row.attempts_made + 1;
      const error = errorMessage(err);
      if (attemptsMade >= row.max_attempts) {
        this.stmt.deadLetter.run({ ...key, attemptsMade, error, now: Date.now() });
        this.logger?.warn({ job_id: row.id, attempts: attemptsMade, error }, 'mail job dead-lettered');
      } else {
        const runAt = Date.now() + backoffDelayMs({ attempts: row.max_attempts, backoffMs: row.backoff_ms }, attemptsMade);
        this.stmt.retryLater.run({ ...key, attemptsMade, error, runAt });
      }
    } finally {
      clearInterval(heartbeat);
    }
  }
}
