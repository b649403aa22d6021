import type { ProjectId, SqliteDatabase, WebhookEvent } from '@plinth/shared';
import type { OutboxUserEvent, UserEventOutbox } from './user-event-outbox';

/**
 * The user events' outbox in auth.db (user-event-outbox.ts). Made as it is, like the factor
 * tables: no migration has changed it yet. An older release simply ignores the table.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS auth_user_events (
  id TEXT PRIMARY KEY, project TEXT NOT NULL, event TEXT NOT NULL, created_at INTEGER NOT NULL, handed_at INTEGER
);
CREATE INDEX IF NOT EXISTS auth_user_events_pending ON auth_user_events (created_at, id) WHERE handed_at IS NULL;
CREATE INDEX IF NOT EXISTS auth_user_events_handed ON auth_user_events (handed_at) WHERE handed_at IS NOT NULL;
`;

interface EventRow {
  project: string;
  event: string;
}

const fromRow = (r: EventRow): OutboxUserEvent => ({ project: r.project as ProjectId, event: JSON.parse(r.event) as WebhookEvent });

export class SqliteUserEvents implements UserEventOutbox {
  constructor(private readonly db: SqliteDatabase) {
    db.exec(SCHEMA);
  }

  /** Appends the event; call it inside the transaction of the write it describes. */
  append(e: OutboxUserEvent, now: number): void {
    this.db
      .prepare('INSERT INTO auth_user_events (id, project, event, created_at, handed_at) VALUES (?, ?, ?, ?, NULL)')
      .run(e.event.id, e.project, JSON.stringify(e.event), now);
  }

  async pending(limit: number): Promise<OutboxUserEvent[]> {
    const rows = this.db
      .prepare('SELECT project, event FROM auth_user_events WHERE handed_at IS NULL ORDER BY created_at, id LIMIT ?')
      .all(limit) as EventRow[];
    return rows.map(fromRow);
  }

  async markHanded(ids: readonly string[], now: number): Promise<void> {
    const mark = this.db.prepare('UPDATE auth_user_events SET handed_at = ? WHERE id = ? AND handed_at IS NULL');
    this.db.transaction(() => {
      for (const id of ids) mark.run(now, id);
    })();
  }

  async handedAfter(afterId: string, limit: number): Promise<OutboxUserEvent[]> {
    const rows = this.db
      .prepare('SELECT project, event FROM auth_user_events WHERE handed_at IS NOT NULL AND id > ? ORDER BY id LIMIT ?')
      .all(afterId, limit) as EventRow[];
    return rows.map(fromRow);
  }

  async trim(before: number): Promise<number> {
    return this.db.prepare('DELETE FROM auth_user_events WHERE handed_at IS NOT NULL AND handed_at < ?').run(before).changes;
  }
}
