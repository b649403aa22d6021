import { asProjectId, type MailJob } from '@plinth/shared';
import type { MailboxStore } from '../store/mailbox-store';
import type { RenderedMail } from '../templates/render';
import type { Transport } from './transport';

/** Delivers into the dev mailbox (no SMTP_URL): the message is stored and readable over the API. */
export class MailboxTransport implements Transport {
  readonly name = 'mailbox' as const;

  constructor(private readonly store: MailboxStore) {}

  async send(job: MailJob, mail: RenderedMail): Promise<void> {
    await this.store.save(asProjectId(job.project), {
      id: job.id,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
      kind: job.kind,
      data: job.data,
      created_at: new Date().toISOString(),
    });
  }

  async close(): Promise<void> {
    await this.store.close();
  }
}
