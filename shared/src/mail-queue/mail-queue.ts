import type { MailJob } from './mail-job';
import type { FailedJob, JobAttempt, JobHandler, JobQueue, JobQueueCounts, RetryPolicy } from './job-queue';

export { backoffDelayMs } from './job-queue';

/**
 * The mail queue between auth (producer) and the mailer (consumer): a JobQueue of MailJobs
 * (job-queue.ts states the guarantees).
 */
export type MailQueue = JobQueue<MailJob>;
export type MailAttempt = JobAttempt;
export type MailHandler = JobHandler<MailJob>;
export type FailedMailJob = FailedJob<MailJob>;
export type MailQueueCounts = JobQueueCounts;
export type MailRetryPolicy = RetryPolicy;
