import type { MailJob } from '@plinth/shared';
import type { RenderedMail } from '../templates/render';

/** Which transport delivered a mail (a metrics label). */
export type TransportName = 'smtp' | 'mailbox';

/**
 * Hands a rendered mail to the outside world. `send` resolves once the mail is accepted (by the
 * SMTP server, or stored in the dev mailbox) and throws otherwise, so the job is retried.
 */
export interface Transport {
  readonly name: TransportName;
  send(job: MailJob, mail: RenderedMail): Promise<void>;
  close(): Promise<void>;
}
