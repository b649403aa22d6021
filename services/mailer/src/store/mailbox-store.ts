import type { MailJob, MailKind, ProjectId } from '@plinth/shared';

/** A message kept by the dev mailbox, as `GET /mailbox` returns it (docs/mailer.md). */
export interface MailboxMessage {
  /** The mail job's id. */
  id: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  kind: MailKind;
  data: MailJob['data'];
  /** ISO 8601, when the message was delivered to the mailbox. */
  created_at: string;
}

export interface MailboxQuery {
  /** Only messages to this address (compared case-insensitively). */
  to?: string;
  limit: number;
}

/**
 * The dev mailbox: delivered messages, readable over the API instead of sent (standalone mode,
 * or whenever no SMTP_URL is set). Contract: `describeMailboxStoreContract`.
 */
export interface MailboxStore {
  /**
   * Keeps a delivered message. Idempotent by id within the project: a redelivery of the same
   * job keeps the first copy, so the mailbox shows each mail once.
   */
  save(project: ProjectId, message: MailboxMessage): Promise<void>;
  /** The project's messages, newest first (ties: later id first), at most `limit`. */
  list(project: ProjectId, query: MailboxQuery): Promise<MailboxMessage[]>;
  /** Deletes every message of the project (the project was deleted). Idempotent. */
  purgeProject(project: ProjectId): Promise<void>;
  close(): Promise<void>;
}
