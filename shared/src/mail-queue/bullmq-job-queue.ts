import type { Job, Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { loadIoredis, REQUEST_REDIS_OPTIONS } from '../redis';
import type { Logger } from 'pino';
import { NotFoundError } from '../errors';
import type { ProjectId } from '../types';
import type { FailedJob, JobHandler, JobQueue, JobQueueCounts, QueueJob, RetryPolicy } from './job-queue';

/** BullMQ, loaded when a BullMqJobQueue is made: a process without REDIS_URL does not load it. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const loadBullmq = (): typeof import('bullmq') => require('bullmq') as typeof import('bullmq');

export interface BullMqJobQueueOptions extends RetryPolicy {
  /** `redis://…` (cluster mode: REDIS_URL). */
  redisUrl: string;
  /** Defaults to the kind's queue name; tests use a unique name each. */
  queueName?: string;
  /** Jobs delivered at once by this process. Default 4. */
  concurrency?: number;
  /** How long delivered jobs are kept (the idempotency window). Default 7 days. */
  retentionMs?: number;
  logger?: Logger;
}

/** Where a job stands in a BullMqJobQueue (BullMqJobQueue.jobState). */
export type QueuedJobState = 'pending' | 'done' | 'missing';

/** What a queue needs to know about its jobs. */
export interface BullMqJobKind<J extends QueueJob> {
  /** The default BullMQ queue name. Renaming it strands queued jobs. */
  queueName: string;
  /** Throws a TypeError naming the bad field unless `job` is well-formed. */
  validate: (job: unknown) => asserts job is J;
  /** BullMQ's job name (shown in its tools). */
  jobName: (job: J) => string;
}

/**
 * The cluster JobQueue on BullMQ. Job ids are the job ids (BullMQ ignores an add whose id
 * exists: that is the idempotency); attempts and exponential backoff are BullMQ job options;
 * dead letters are BullMQ's failed set, filtered by project, and retry is `job.retry('failed')`.
 */
export class BullMqJobQueue<J extends QueueJob> implements JobQueue<J> {
  private readonly queue: Queue<J>;
  private readonly producerConnection: Redis;
  private readonly queueName: string;
  private readonly concurrency: number;
  private worker: Worker<J> | null = null;
  private workerConnection: Redis | null = null;
  private closed = false;

  constructor(
    private readonly opts: BullMqJobQueueOptions,
    private readonly kind: BullMqJobKind<J>,
  ) {
    this.queueName = opts.queueName ?? kind.queueName;
    this.concurrency = opts.concurrency ?? 4;
    // A producer fails fast when Redis is unreachable instead of queueing commands forever.
    this.producerConnection = new (loadIoredis().Redis)(opts.redisUrl, REQUEST_REDIS_OPTIONS);
    this.producerConnection.on('error', (err) => opts.logger?.warn({ err }, `${kind.queueName} queue: redis error`));
    this.queue = new (loadBullmq().Queue)<J>(this.queueName, {
      connection: this.producerConnection,
      defaultJobOptions: {
        attempts: opts.attempts,
        backoff: { type: 'exponential', delay: opts.backoffMs },
        removeOnComplete: { age: Math.ceil((opts.retentionMs ?? 7 * 24 * 3600 * 1000) / 1000) },
        removeOnFail: false,
      },
    });
    this.queue.on('error', (err) => opts.logger?.warn({ err }, `${kind.queueName} queue error`));
  }

  async enqueue(job: J): Promise<void> {
    this.kind.validate(job);
    this.assertOpen();
    // BullMQ's types want the data to match the name's type; all our jobs share one type.
    await this.queue.add(this.kind.jobName(job) as never, job as never, { jobId: job.id });
  }

  /**
   * Whether the queue still holds job `id`: `pending` (waiting, delayed or being delivered),
   * `done` (delivered, or a dead letter) or `missing` (never added, removed after its retention,
   * or lost with a Redis that restarted empty). Throws while Redis is unreachable.
   */
  async jobState(id: string): Promise<QueuedJobState> {
    this.assertOpen();
    const state = await this.queue.getJobState(id);
    if (state === 'unknown') return 'missing';
    return state === 'completed' || state === 'failed' ? 'done' : 'pending';
  }

  start(handler: JobHandler<J>): void {
    this.assertOpen();
    if (this.worker) throw new Error('The queue consumer is already started.');
    // Workers block on Redis; BullMQ requires maxRetriesPerRequest: null on their connection.
    this.workerConnection = new (loadIoredis().Redis)(this.opts.redisUrl, { maxRetriesPerRequest: null });
    this.workerConnection.on('error', (err) => this.opts.logger?.warn({ err }, `${this.kind.queueName} worker: redis error`));
    this.worker = new (loadBullmq().Worker)<J>(
      this.queueName,
      async (job: Job<J>) => {
        await handler(job.data, { attempt: job.attemptsMade + 1, attempts: job.opts.attempts ?? 1 });
      },
      { connection: this.workerConnection, concurrency: this.concurrency },
    );
    this.worker.on('error', (err) => this.opts.logger?.warn({ err }, `${this.kind.queueName} worker error`));
  }

  async stop(): Promise<void> {
    const worker = this.worker;
    const connection = this.workerConnection;
    this.worker = null;
    this.workerConnection = null;
    if (worker) await worker.close();
    if (connection) await connection.quit().catch(() => connection.disconnect());
  }

  async listFailed(project: ProjectId): Promise<FailedJob<J>[]> {
    this.assertOpen();
    const jobs = (await this.queue.getFailed(0, -1)) as Job<J>[];
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
    const job = (await this.queue.getJob(id)) as Job<J> | undefined;
    const notFound = new NotFoundError(`No failed job ${id}.`, { id });
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
        const jobs = (await this.queue.getJobs([state], start, start + pageSize - 1)) as Array<Job<J> | undefined>;
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

  async counts(): Promise<JobQueueCounts> {
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
    if (this.closed) throw new Error('The queue is closed.');
  }
}
