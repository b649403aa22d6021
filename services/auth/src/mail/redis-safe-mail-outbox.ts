import type { Logger } from 'pino';
import { assertMailJob, SecretSealer, type MailJob, type ProjectId, type QueuedJobState } from '@plinth/shared';
import type { MailOutboxStore, StoredMail } from '../store/mail-outbox-store';
import type { MailOutbox } from './mail-outbox';

/** The queue side this outbox needs: BullMqJobQueue. */
export interface StatefulMailQueue {
  enqueue(job: MailJob): Promise<void>;
  jobState(id: string): Promise<QueuedJobState>;
}

export interface RedisSafeMailOutboxOptions {
  /** How often the stored mails are checked against the queue, ms. Default 5000. */
  checkMs?: number;
  /**
   * A stored mail the queue does not hold is enqueued again only once it is this old, ms (so a
   * mail whose first enqueue is still under way, or failed and is being withdrawn, is left
   * alone). Default twice `checkMs`.
   */
  graceMs?: number;
  /** A mail still not delivered after this long is given up (its row deleted), ms. Default 24 h. */
  retentionMs?: number;
  /** Rows read per page. Default 100. */
  batch?: number;
  now?: () => number;
}

/**
 * The mail outbox of auth in a cluster, where the mail queue lives in Redis (BullMQ): each mail
 * job is first written to the users' database (store/mail-outbox-store.ts, sealed), then
 * enqueued. Every `checkMs`, and as the process starts, each stored mail is looked up on the
 * queue: delivered or dead — its row is deleted; held — left alone; missing (Redis restarted
 * empty, or failed over to a replica that lagged) — enqueued again under the same job id, so
 * several auth replicas doing the same make one job. Nothing queued is lost with Redis's data.
 *
 * A mail the queue delivered and lost before the next check saw it delivered (within `checkMs`)
 * is sent again; one whose first enqueue failed is withdrawn (the caller answers 503 and the user
 * asks again), never sent later. Without Redis (standalone) the mail queue is already a table of
 * its own and this outbox is not used.
 */
export class RedisSafeMailOutbox implements MailOutbox {
  private readonly sealer: SecretSealer;
  private readonly checkMs: number;
  private readonly graceMs: number;
  private readonly retentionMs: number;
  private readonly batch: number;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | null = null;
  private checking: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly store: MailOutboxStore,
    private readonly queue: StatefulMailQueue,
    keyMaterial: string,
    private readonly logger: Logger,
    opts: RedisSafeMailOutboxOptions = {},
  ) {
    this.sealer = new SecretSealer(keyMaterial, 'plinth-auth', 'mail-outbox-encryption');
    this.checkMs = opts.checkMs ?? 5000;
    this.graceMs = opts.graceMs ?? 2 * this.checkMs;
    this.retentionMs = opts.retentionMs ?? 24 * 3_600_000;
    this.batch = opts.batch ?? 100;
    this.now = opts.now ?? Date.now;
  }

  async enqueue(job: MailJob): Promise<void> {
    assertMailJob(job);
    await this.store.add({ id: job.id, project: job.project as ProjectId, sealed: this.seal(job), created_at: this.now() });
    try {
      await this.queue.enqueue(job);
    } catch (err) {
      // The caller answers that the mail could not be queued: it must not arrive later either.
      await this.store.remove([job.id]).catch((e: unknown) => this.logger.warn({ err: e, job_id: job.id }, 'mail outbox: a refused mail stays stored and may be sent later'));
      throw err;
    }
  }

  /** Checks now, then every `checkMs` until stop(). */
  start(): void {
    if (this.timer || this.stopped) return;
    const tick = (): void => {
      this.checking = this.check()
        .then(
          (r) => {
            if (r.requeued > 0) this.logger.warn({ requeued: r.requeued }, 'mail outbox: the queue had lost mails; enqueued them again');
          },
          (err: unknown) => this.logger.warn({ err }, 'mail outbox: check failed; trying again'),
        )
        .finally(() => {
          this.checking = null;
          // Unref'd: the check never keeps a process alive that is otherwise done.
          if (!this.stopped) this.timer = setTimeout(tick, this.checkMs).unref();
        });
    };
    this.timer = setTimeout(tick, 0).unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.checking;
  }

  /** One pass over the stored mails: answers how many were enqueued again and how many rows were done. */
  async check(): Promise<{ requeued: number; done: number }> {
    await this.store.trim(this.now() - this.retentionMs);
    let requeued = 0;
    let done = 0;
    for (let after = ''; ; ) {
      const rows = await this.store.after(after, this.batch);
      const finished: string[] = [];
      for (const row of rows) {
        const state = await this.queue.jobState(row.id);
        if (state === 'done') finished.push(row.id);
        else if (state === 'missing' && this.now() - row.created_at >= this.graceMs) {
          const job = this.open(row);
          if (!job) {
            // Sealed under another key (PLINTH_INTERNAL_SECRET changed): it cannot be sent.
            this.logger.error({ job_id: row.id, project: row.project }, 'mail outbox: a stored mail cannot be opened with this key; dropped');
            finished.push(row.id);
            continue;
          }
          await this.queue.enqueue(job);
          requeued += 1;
        }
      }
      if (finished.length > 0) await this.store.remove(finished);
      done += finished.length;
      if (rows.length < this.batch) break;
      after = rows[rows.length - 1]!.id;
    }
    return { requeued, done };
  }

  private seal(job: MailJob): string {
    return this.sealer.seal(Buffer.from(job.id), JSON.stringify(job));
  }

  private open(row: StoredMail): MailJob | null {
    const json = this.sealer.open(Buffer.from(row.id), row.sealed);
    if (json === null) return null;
    try {
      const job = JSON.parse(json) as unknown;
      assertMailJob(job);
      return job;
    } catch {
      return null;
    }
  }
}
