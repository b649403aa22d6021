import type { ProjectId, SqliteDatabase } from '@plinth/shared';
import type { RevocationLog, RevokedSession } from './revocation-log';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS auth_revocation_log (
  project TEXT NOT NULL, sid TEXT NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (project, sid)
);
CREATE INDEX IF NOT EXISTS auth_revocation_log_at ON auth_revocation_log (at, project, sid);
`;

/** RevocationLog in `auth.db` (a cluster whose users are on SQLite, PLINTH_STORAGE=sqlite). */
export class SqliteRevocationLog implements RevocationLog {
  constructor(private readonly db: SqliteDatabase) {
    db.exec(SCHEMA);
  }

  async record(entries: RevokedSession[]): Promise<void> {
    if (entries.length === 0) return;
    const insert = this.db.prepare(
      `INSERT INTO auth_revocation_log (project, sid, at) VALUES (?, ?, ?)
       ON CONFLICT (project, sid) DO UPDATE SET at = min(at, excluded.at)`,
    );
    this.db.transaction(() => {
      for (const e of entries) insert.run(e.project, e.sid, e.at);
    }).immediate();
  }

  async since(since: number, limit: number, after?: RevokedSession): Promise<RevokedSession[]> {
    const rows = after
      ? this.db
          .prepare(
            `SELECT project, sid, at FROM auth_revocation_log WHERE at >= ? AND (at, project, sid) > (?, ?, ?)
             ORDER BY at, project, sid LIMIT ?`,
          )
          .all(since, after.at, after.project, after.sid, limit)
      : this.db.prepare('SELECT project, sid, at FROM auth_revocation_log WHERE at >= ? ORDER BY at, project, sid LIMIT ?').all(since, limit);
    return (rows as Array<{ project: string; sid: string; at: number }>).map((r) => ({ project: r.project as ProjectId, sid: r.sid, at: r.at }));
  }

  async prune(before: number): Promise<void> {
    this.db.prepare('DELETE FROM auth_revocation_log WHERE at < ?').run(before);
  }
}
