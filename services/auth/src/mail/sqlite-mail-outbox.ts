import type { ProjectId, SqliteDatabase } from '@plinth/shared';
import type { MailJob, MailOutbox } from './mail-outbox';

interface JobRow {
  id: string;
  project: ProjectId;
  kind: MailJob['kind'];
  recipient: string;
  data: string;
  created_at: string;
}

/** A durable outbox in the auth SQLite database (standalone mode, and what tests read). */
export class SqliteMailOutbox implements MailOutbox {
  constructor(private readonly db: SqliteDatabase) {
    db.exec(`CREATE TABLE IF NOT EXISTS auth_mail_outbox (
      seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, project TEXT NOT NULL, kind TEXT NOT NULL,
      recipient TEXT NOT NULL, data TEXT NOT NULL, created_at TEXT NOT NULL
    )`);
  }

  async enqueue(job: MailJob): Promise<void> {
    this.db
      .prepare('INSERT INTO auth_mail_outbox (id, project, kind, recipient, data, created_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(job.id, job.project, job.kind, job.to, JSON.stringify(job.data), job.created_at);
  }

  /** The project's jobs, newest first, optionally only those to one address. */
  async list(project: ProjectId, to?: string): Promise<MailJob[]> {
    const rows = this.db
      .prepare(
        `SELECT id, project, kind, recipient, data, created_at FROM auth_mail_outbox
         WHERE project = ? AND (? IS NULL OR recipient = ?) ORDER BY seq DESC`,
      )
      .all(project, to ?? null, to ?? null) as JobRow[];
    return rows.map((r) => ({
      id: r.id,
      project: r.project,
      kind: r.kind,
      to: r.recipient,
      data: JSON.parse(r.data) as MailJob['data'],
      created_at: r.created_at,
    }));
  }
}
