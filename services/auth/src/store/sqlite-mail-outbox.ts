import type { ProjectId, SqliteDatabase } from '@plinth/shared';
import type { MailOutboxStore, StoredMail } from './mail-outbox-store';

/**
 * The mail outbox (mail-outbox-store.ts) in auth.db, for auth on SQLite with a Redis mail queue.
 * Made as it is, like the user events' table: no migration has changed it yet, and an older
 * release simply ignores it.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS auth_mail_outbox (
  id TEXT PRIMARY KEY, project TEXT NOT NULL, sealed TEXT NOT NULL, created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS auth_mail_outbox_created ON auth_mail_outbox (created_at);
`;

interface Row {
  id: string;
  project: string;
  sealed: string;
  created_at: number;
}

const fromRow = (r: Row): StoredMail => ({ id: r.id, project: r.project as ProjectId, sealed: r.sealed, created_at: r.created_at });

export class SqliteMailOutbox implements MailOutboxStore {
  constructor(private readonly db: SqliteDatabase) {
    db.exec(SCHEMA);
  }

  async add(mail: StoredMail): Promise<void> {
    this.db
      .prepare('INSERT INTO auth_mail_outbox (id, project, sealed, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING')
      .run(mail.id, mail.project, mail.sealed, mail.created_at);
  }

  async after(afterId: string, limit: number): Promise<StoredMail[]> {
    const rows = this.db.prepare('SELECT id, project, sealed, created_at FROM auth_mail_outbox WHERE id > ? ORDER BY id LIMIT ?').all(afterId, limit) as Row[];
    return rows.map(fromRow);
  }

  async remove(ids: readonly string[]): Promise<void> {
    const del = this.db.prepare('DELETE FROM auth_mail_outbox WHERE id = ?');
    this.db.transaction(() => {
      for (const id of ids) del.run(id);
    })();
  }

  async trim(before: number): Promise<number> {
    return this.db.prepare('DELETE FROM auth_mail_outbox WHERE created_at < ?').run(before).changes;
  }
}
