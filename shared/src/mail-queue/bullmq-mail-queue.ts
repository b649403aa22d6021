import { assertMailJob, MAIL_QUEUE_NAME, type MailJob } from './mail-job';
import { BullMqJobQueue, type BullMqJobQueueOptions } from './bullmq-job-queue';

export type BullMqMailQueueOptions = BullMqJobQueueOptions;

/** The cluster mail queue: MailJobs on BullMQ, in the queue MAIL_QUEUE_NAME unless told otherwise. */
export class BullMqMailQueue extends BullMqJobQueue<MailJob> {
  constructor(opts: BullMqMailQueueOptions) {
    super(opts, { queueName: MAIL_QUEUE_NAME, validate: assertMailJob, jobName: (job) => job.kind });
  }
}
