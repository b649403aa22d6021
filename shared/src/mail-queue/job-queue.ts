import type { ProjectId } from '../types';

/** What every queued job carries: its idempotency id and the project it belongs to. */
export interface QueueJob {
  /** Unique per job; the idempotency key (see JobQueue.enqueue). Matches JOB_ID_PATTERN. */
  id: string;
  project: string;
}

/**
 * Job ids: a letter, then letters, digits, `_` or `-`, at most 128 characters (BullMQ refuses
 * ids with `:` and treats all-digit ids as its own).
 */
export const JOB_ID_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,127}$/;

/** Which attempt a handler call is, so the consumer can tell a retry from a last try. */
export interface JobAttempt {
  /** 1 for the first delivery, 2 for the first retry, … */
  attempt: number;
  /** Total attempts allowed; when `attempt === attempts` and the handler throws, the job is dead-lettered. */
  attempts: number;
}

/** Delivers one job. Resolving marks it done; throwing schedules a retry (or dead-letters it). */
export type JobHandler<J> = (job: J, attempt: JobAttempt) => Promise<void>;

/** A job that failed its last attempt: a dead letter, kept until retried. */
export interface FailedJob<J> {
  job: J;
  /** Attempts made before it was given up. */
  attempts: number;
  /** The message of the last error the handler threw. */
  error: string;
  /** ISO 8601, when the last attempt failed. */
  failed_at: string;
}

/** How many jobs are in each state, queue-wide (operations metrics, readiness). */
export interface JobQueueCounts {
  /** Waiting for a first try or for a retry's backoff to pass. */
  waiting: number;
  /** Being delivered right now. */
  active: number;
  /** Dead letters. */
  failed: number;
}

/**
 * Retry policy of a queue, fixed for each job when it is enqueued (the producer's settings
 * govern, as with BullMQ job options): attempt n+1 starts no earlier than
 * `backoffMs * 2^(n-1)` after attempt n failed.
 */
export interface RetryPolicy {
  /** Total attempts, ≥ 1. */
  attempts: number;
  /** Base of the exponential backoff, in milliseconds. */
  backoffMs: number;
}

/**
 * A durable job queue with retries, exponential backoff and dead letters (docs/architecture.md
 * "Ports and adapters"): BullMQ on Redis in cluster mode, an embedded SQLite outbox standalone.
 * The mail queue (auth → mailer) and the webhook queue (records, auth → webhook deliveries) are
 * two instances of it; both adapters pass `describeMailQueueContract`.
 *
 * Delivery is at-least-once: a job whose handler was running when its process died is handed
 * to a handler again (after BullMQ's stalled-job check or the outbox lease). Consumers make
 * delivery idempotent by job id where they can.
 */
export interface JobQueue<J extends QueueJob> {
  /**
   * Stores the job durably; resolved means it will be delivered even if this process dies
   * now. Idempotent by `job.id`: enqueueing an id the queue already holds (waiting, in flight,
   * delivered within the retention window, or dead) changes nothing and delivers nothing more.
   * Throws TypeError, naming the field, for a malformed job.
   */
  enqueue(job: J): Promise<void>;

  /**
   * Starts consuming: each job is handed to `handler` until it resolves or the attempts run
   * out. Jobs of every project are consumed; several may be in flight at once up to the
   * adapter's concurrency. Throws if already started.
   */
  start(handler: JobHandler<J>): void;

  /**
   * Stops consuming: takes no new job and resolves once the in-flight handler calls have
   * settled (their outcome is recorded). Jobs not yet taken stay queued for the next consumer.
   * Idempotent; `start` may be called again afterwards.
   */
  stop(): Promise<void>;

  /** The project's dead letters, newest failure first. Other projects' jobs never appear. */
  listFailed(project: ProjectId): Promise<FailedJob<J>[]>;

  /**
   * Moves a dead letter back to the queue with a fresh set of attempts; it leaves the failed
   * list at once. Throws NotFoundError when the project has no dead letter with that id.
   */
  retryFailed(project: ProjectId, id: string): Promise<void>;

  /**
   * The project was deleted: removes its jobs — waiting, retrying, dead, and delivered ones kept
   * for idempotency. A job being delivered at this very moment may still finish. Idempotent.
   */
  purgeProject(project: ProjectId): Promise<void>;

  /** Queue-wide counts by state (not per project: this feeds operations metrics). */
  counts(): Promise<JobQueueCounts>;

  /** Stops consuming (as `stop`) and releases connections. The queue is unusable afterwards. */
  close(): Promise<void>;
}

/** Exponential backoff shared by both adapters (BullMQ's 'exponential' formula). */
export function backoffDelayMs(policy: RetryPolicy, failedAttempts: number): number {
  return Math.round(policy.backoffMs * 2 ** Math.max(0, failedAttempts - 1));
}
