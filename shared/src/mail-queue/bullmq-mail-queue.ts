import type { Job, Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { loadIoredis, REQUEST_REDIS_OPTIONS } from '../redis';
import type { Logger } from 'pino';
import { NotFoundError } from '../errors';
import type { ProjectId } from '../types';
import { assertMailJob, MAIL_QUEUE_NAME, type MailJob } from './mail-job';
import type { FailedMailJob, MailHandler, MailQueue, MailQueueCounts, MailRetryPolicy } from './mail-queue';

/** BullMQ, loaded when a BullMqMailQueue is made: a process without REDIS_URL does not load it. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const loadBullmq = (): typeof import('bullmq') => require('bullmq') as typeof import('bullmq');

export interface BullMqMailQueueOptions extends MailRetryPolicy {
  /** `redis://…` (cluster mode: REDIS_URL). */
  redisUrl: string;
  /** Defaults to MAIL_QUEUE_NAME; tests use a unique name each. */
  queueName?: string;
  /** Jobs delivered at once by this process. Default 4. */
  concurrency?: number;
  /** How long delivered jobs are kept (the idempotency window). Default 7 days. */
  retentionMs?: number;
  logger?: Logger;
}

/**
 * The cluster MailQueue on BullMQ. Job ids are the mail job ids (BullMQ ignores an add whose id
 * exists: that is the idempotency); attempts and exponential backoff are BullMQ job options;
 * dead letters are BullMQ's failed set, filtered by project, and retry is `job.retry('failed')`.
 */
export class BullMqMailQueue implements MailQueue {
  private readonly queue: Queue<MailJob>;
  private readonly producerConnection: Redis;
  private readonly queueName: string;
  private readonly concurrency: number;
  private worker: Worker<MailJob> | null = null;
  private workerConnection: Redis | null = null;
  private closed = false;

  constructor(private readonly opts: BullMqMailQueueOptions) {
    this.queueName = opts.queueName ?? MAIL_QUEUE_NAME;
    this.concurrency = opts.concurrency ?? 4;
    // A producer fails fast when Redis is unreachable instead of queueing commands forever.
    this.producerConnection = new (loadIoredis().Redis)(opts.redisUrl, REQUEST_REDIS_OPTIONS);
    this.producerConnection.on('error', (err) => opts.logger?.warn({ err }, 'mail queue: redis error'));
    this.queue = new (loadBullmq().Queue)<MailJob>(this.queueName, {
      connection: this.producerConnection,
      defaultJobOptions: {
        attempts: opts.attempts,
        backoff: { type: 'exponential', delay: opts.backoffMs },
        removeOnComplete: { age: Math.ceil((opts.retentionMs ?? 7 * 24 * 3600 * 1000) / 1000) },
        removeOnFail: false,
      },
    });
    this.queue.on('error', (err) => opts.logger?.warn({ err }, 'mail queue error'));
  }

  async enqueue(job: MailJob): Promise<void> {
    assertMailJob(job);
    this.assertOpen();
    await this.queue.add(job.kind, job, { jobId: job.id });
  }

  start(handler: MailHandler): void {
    this.assertOpen();
    if (this.worker) throw new Error('The mail queue consumer is already started.');
    // Workers block on Redis; BullMQ requires maxRetriesPerRequest: null on their connection.
    this.workerConnection = new (loadIoredis().Redis)(this.opts.redisUrl, { maxRetriesPerRequest: null });
    this.workerConnection.on('error', (err) => this.opts.logger?.warn({ err }, 'mail worker: redis error'));
    this.worker = new (loadBullmq().Worker)<MailJob>(
      this.queueName,
      async (job: Job<MailJob>) => {
        await handler(job.data, { attempt: job.attemptsMade + 1, attempts: job.opts.attempts ?? 1 });
      },
      { connection: this.workerConnection, concurrency: this.concurrency },
    );
    this.worker.on('error', (err) => this.opts.logger?.warn({ err }, 'mail worker error'));
  }

  async stop(): Promise<void> {
    const worker = this.worker;
    const connection = this.workerConnection;
    this.worker = null;
    this.workerConnection = null;
    if (worker) await worker.close();
    if (connection) await connection.quit().catch(() => connection.disconnect());
  }

  async listFailed(project: ProjectId): Promise<FailedMailJob[]> {
    this.assertOpen();
    const jobs = (await this.queue.getFailed(0, -1)) as Job<MailJob>[];
    return jobs
      .filter((job) => job.data?.project === project)
      .sort((a, b) => (b.finishedOn ?? 0) - (a.finishedOn ?? 0))
      .map((job) => ({
        job: job.data,
        attempts: job.attemptsMade,
        error: job.failedReason ?? '',
        failed_at: new Date(job.finishedOn ?? job.timestamp).toISOString(),
      }));
  }

  async retryFailed(project: ProjectId, id: string): Promise<void> {
    this.assertOpen();
    const job = (await this.queue.getJob(id)) as Job<MailJob> | undefined;
    const notFound = new NotFoundError(`No failed mail job ${id}.`, { id });
    if (!job || job.data?.project !== project || !(await job.isFailed())) throw notFound;
    try {
      await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
    } catch {
      // Someone else retried or removed it between the check and the move.
      throw notFound;
    }
  }

  async purgeProject(project: ProjectId): Promise<void> {
    this.assertOpen();
    const pageSize = 1000;
    for (const state of ['waiting', 'delayed', 'prioritized', 'waiting-children', 'failed', 'completed'] as const) {
      // Page through the state; removing jobs shifts later ones down, so skip only what stays.
      for (let start = 0; ; ) {
        const jobs = (await this.queue.getJobs([state], start, start + pageSize - 1)) as Array<Job<MailJob> | undefined>;
        if (jobs.length === 0) break;
        let removed = 0;
        for (const job of jobs) {
          if (job?.data?.project !== project) continue;
          // A job a worker holds the lock of cannot be removed: it is being delivered and finishes.
          if (await job.remove().then(() => true, () => false)) removed++;
        }
        start += jobs.length - removed;
      }
    }
  }

  async counts(): Promise<MailQueueCounts> {
    this.assertOpen();
    const c = await this.queue.getJobCounts('waiting', 'delayed', 'prioritized', 'active', 'failed');
    return {
      waiting: (c.waiting ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0),
      active: c.active ?? 0,
      failed: c.failed ?? 0,
    };
  }

  /** Removes every job and key of this queue. Tests only: production queues are never obliterated. */
  async obliterate(): Promise<void> {
    await this.queue.obliterate({ force: true });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.stop();
    await this.queue.close();
    await this.producerConnection.quit().catch(() => this.producerConnection.disconnect());
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('The mail queue is closed.');
  }
}
