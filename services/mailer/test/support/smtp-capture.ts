import type { AddressInfo } from 'node:net';
import { simpleParser, type AddressObject, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** A message the capture server accepted, parsed by mailparser. */
export interface CapturedMail {
  from: string | undefined;
  to: string[];
  subject: string | undefined;
  text: string;
  html: string;
  messageId: string | undefined;
  headers: ParsedMail['headers'];
}

/** Which SMTP step to refuse, with a temporary (4xx) error, for the next calls. */
export type RefusalStep = 'rcpt' | 'data';

function addresses(field: AddressObject | AddressObject[] | undefined): string[] {
  const list = field === undefined ? [] : Array.isArray(field) ? field : [field];
  return list.flatMap((a) => a.value.map((v) => v.address ?? ''));
}

function temporaryFailure(message: string): Error {
  return Object.assign(new Error(message), { responseCode: 451 });
}

/**
 * A real SMTP server (smtp-server) on 127.0.0.1 for tests: collects accepted messages, can
 * refuse steps with 4xx errors, and can be stopped and started again on the same port.
 */
export class SmtpCapture {
  readonly messages: CapturedMail[] = [];
  /** Refusals still to hand out, in order. */
  readonly refusals: RefusalStep[] = [];
  private server: SMTPServer | null = null;
  private boundPort = 0;

  get port(): number {
    return this.boundPort;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.boundPort}`;
  }

  /** Listens on `port` (default: the port of the previous start, else a free one). */
  async start(port = this.boundPort): Promise<void> {
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onRcptTo: (_address, _session, callback) => {
        if (this.refusals[0] === 'rcpt') {
          this.refusals.shift();
          callback(temporaryFailure('Mailbox busy, try again later'));
          return;
        }
        callback();
      },
      onData: (stream, _session, callback) => {
        simpleParser(stream).then(
          (parsed) => {
            if (this.refusals[0] === 'data') {
              this.refusals.shift();
              callback(temporaryFailure('Queue full, try again later'));
              return;
            }
            this.messages.push({
              from: addresses(parsed.from)[0],
              to: addresses(parsed.to),
              subject: parsed.subject,
              text: parsed.text ?? '',
              html: typeof parsed.html === 'string' ? parsed.html : '',
              messageId: parsed.messageId,
              headers: parsed.headers,
            });
            callback();
          },
          (err: Error) => callback(err),
        );
      },
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.boundPort = (server.server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops listening; the port refuses connections until `start()` again. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
