import { assertMailJob, type MailJob } from './mail-job';
import { EmbeddedJobQueue, type EmbeddedJobQueueOptions } from './embedded-job-queue';

export type EmbeddedMailQueueOptions = EmbeddedJobQueueOptions;

/** The standalone mail queue: the embedded outbox of MailJobs, in the `mail_outbox` table. */
export class EmbeddedMailQueue extends EmbeddedJobQueue<MailJob> {
  constructor(opts: EmbeddedMailQueueOptions) {
    super(opts, { table: 'mail_outbox', component: 'mail-queue', label: 'mail', validate: assertMailJob });
  }
}
