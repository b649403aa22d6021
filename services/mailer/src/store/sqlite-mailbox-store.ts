import { openSqlite, type ProjectId, type SqliteDatabase } from '@plinth/shared';
import type { MailboxMessage, MailboxQuery, MailboxStore } from './mailbox-store';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS mailbox_messages (
  project    TEXT NOT NULL,
  id         TEXT NOT NULL,
  recipient  TEXT NOT NULL COLLATE NOCASE,
  created_at TEXT NOT NULL,
  message    TEXT NOT NULL,
  PRIMARY KEY (project, id)
);
CREATE INDEX IF NOT EXISTS mailbox_messages_recent ON mailbox_messages (project, created_at);
CREATE INDEX IF NOT EXISTS mailbox_messages_to ON mailbox_messages (project, recipient, created_at);
`;

/** The dev mailbox in SQLite (the mailer's `mailer.db`, beside the embedded outbox). */
export class SqliteMailboxStore implements MailboxStore {
  private readonly db: SqliteDatabase;
  private readonly stmt;

  constructor(file: string) {
    this.db = openSqlite(file);
    this.db.exec(SCHEMA);
    this.stmt = {
      insert: this.db.prepare(
        `INSERT INTO mailbox_messages (project, id, recipient, created_at, message)
         VALUES (@project, @id, @recipient, @created_at, @message) ON CONFLICT DO NOTHING`,
      ),
      all: this.db.prepare(
        `SELECT message FROM mailbox_messages WHERE project = ?
         ORDER BY created_at DESC, id DESC LIMIT ?`,
      ),
      byRecipient: this.db.prepare(
        `SELECT message FROM mailbox_messages WHERE project = ? AND recipient = ?
         ORDER BY created_at DESC, id DESC LIMIT ?`,
      ),
    };
  }

  async save(project: ProjectId, message: MailboxMessage): Promise<void> {
    this.stmt.insert.run({
      project,
      id: message.id,
      recipient: message.to,
      created_at: message.created_at,
      message: JSON.stringify(message),
    });
  }

  async list(project: ProjectId, query: MailboxQuery): Promise<MailboxMessage[]> {
    const rows = (
      query.to === undefined
        ? this.stmt.all.all(project, query.limit)
        : this.stmt.byRecipient.all(project, query.to, query.limit)
    ) as { message: string }[];
    return rows.map((row) => JSON.parse(row.message) as MailboxMessage);
  }

  async purgeProject(project: ProjectId): Promise<void> {
    this.db.prepare('DELETE FROM mailbox_messages WHERE project = ?').run(project);
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
