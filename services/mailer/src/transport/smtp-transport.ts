import type { MailJob } from '@plinth/shared';
import type { RenderedMail } from '../templates/render';
import type { Transport } from './transport';

/** nodemailer, loaded when an SMTP transport is made: without SMTP_URL it is not loaded. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const loadNodemailer = (): typeof import('nodemailer') => require('nodemailer') as typeof import('nodemailer');

/** Domain part for Message-IDs, taken from the sender's address. */
function senderDomain(from: string): string {
  const match = /@([A-Za-z0-9.-]+)>?\s*$/.exec(from);
  return match?.[1] ?? 'plinth.invalid';
}

/**
 * Delivers over SMTP with nodemailer (`SMTP_URL`, e.g. `smtp://user:pass@host:587`). The
 * Message-ID is derived from the job id, so a receiving system can drop the duplicate of a
 * redelivered job. Templates never reach the file system or the network (attachments off).
 */
export class SmtpTransport implements Transport {
  readonly name = 'smtp' as const;
  private readonly transporter;

  /** `timeoutMs` bounds the connect, the greeting and each wait for an answer of one attempt. */
  constructor(smtpUrl: string, timeoutMs: number) {
    this.transporter = loadNodemailer().createTransport(
      { url: smtpUrl, connectionTimeout: timeoutMs, greetingTimeout: timeoutMs, socketTimeout: timeoutMs },
      { disableFileAccess: true, disableUrlAccess: true },
    );
  }

  async send(job: MailJob, mail: RenderedMail): Promise<void> {
    await this.transporter.sendMail({
      from: mail.from,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
      messageId: `<${job.id}@${senderDomain(mail.from)}>`,
      headers: { 'X-Plinth-Project': job.project, 'X-Plinth-Mail-Kind': job.kind },
    });
  }

  async close(): Promise<void> {
    this.transporter.close();
  }
}
