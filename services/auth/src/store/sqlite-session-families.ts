import { CleanupSchedule, sweepInSteps, REVOCATION_RETENTION_SECONDS, type ProjectId, type SqliteDatabase } from '@plinth/shared';
import type { SessionFamilies, StoredSession } from './session-families';
import type { NewSession, Rotation, RotationOutcome, SessionInfo } from './session-store';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS auth_sessions (
  project TEXT NOT NULL, id TEXT NOT NULL, user_id TEXT NOT NULL, created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL, current_hash TEXT NOT NULL, parent_hash TEXT, grace TEXT,
  rotated_at INTEGER, revoked_at INTEGER, PRIMARY KEY (project, id)
);
CREATE INDEX IF NOT EXISTS auth_sessions_user ON auth_sessions (project, user_id);
CREATE INDEX IF NOT EXISTS auth_sessions_revoked ON auth_sessions (revoked_at);
CREATE TABLE IF NOT EXISTS auth_refresh_tokens (
  project TEXT NOT NULL, hash TEXT NOT NULL, sid TEXT NOT NULL, PRIMARY KEY (project, hash)
);
`;

interface SessionRow {
  project: ProjectId;
  id: string;
  user_id: string;
  created_at: number;
  expires_at: number;
  current_hash: string;
  parent_hash: string | null;
  grace: string | null;
  rotated_at: number | null;
  revoked_at: number | null;
  aal: number;
  updated_at: number;
}

const RETENTION_MS = REVOCATION_RETENTION_SECONDS * 1000;

/** A new session starts a prune when the last one started this long ago. */
const PRUNE_EVERY_MS = 3_600_000;

/** Rows a prune step reads (each deleted session also takes its indexes' entries with it). */
const PRUNE_STEP = 200;

function info(r: SessionRow): SessionInfo {
  return { id: r.id, user_id: r.user_id, created_at: r.created_at, expires_at: r.expires_at, aal: r.aal === 2 ? 2 : 1 };
}

function columns(db: SqliteDatabase): string[] {
  return (db.prepare('PRAGMA table_info(auth_sessions)').all() as Array<{ name: string }>).map((c) => c.name);
}

/**
 * SessionFamilies in SQLite (`auth.db`): standalone's session store and a SQLite cluster's durable
 * copy behind Redis. Every method runs as one synchronous SQLite transaction, so rotation is
 * atomic within and across processes on the same file.
 */
export class SqliteSessionFamilies implements SessionFamilies {
  /** Prunes of long-ended families (pruneEnded), started by a new session. */
  private readonly prunes = new CleanupSchedule(PRUNE_EVERY_MS, (now) => this.pruneEnded(now));

  constructor(private readonly db: SqliteDatabase) {
    db.exec(SCHEMA);
    // Columns added after the first release are checked again inside an IMMEDIATE transaction:
    // replicas on one file may start together, and the second must not add a column twice.
    // The session's assurance level (docs/auth.md "Two-factor sign-in").
    if (!columns(db).includes('aal')) {
      db.transaction(() => {
        if (!columns(db).includes('aal')) db.exec('ALTER TABLE auth_sessions ADD COLUMN aal INTEGER NOT NULL DEFAULT 1');
      }).immediate();
    }
    // Added with the Redis cache's rebuild: when a family was created or last rotated (changedSince).
    if (!columns(db).includes('updated_at')) {
      db.transaction(() => {
        if (columns(db).includes('updated_at')) return;
        db.exec('ALTER TABLE auth_sessions ADD COLUMN updated_at INTEGER NOT NULL DEFAULT 0');
        db.exec('UPDATE auth_sessions SET updated_at = coalesce(rotated_at, created_at)');
      }).immediate();
    }
    db.exec('CREATE INDEX IF NOT EXISTS auth_sessions_updated ON auth_sessions (updated_at, project, id)');
  }

  private row(project: ProjectId, sid: string): SessionRow | undefined {
    return this.db.prepare('SELECT * FROM auth_sessions WHERE project = ? AND id = ?').get(project, sid) as SessionRow | undefined;
  }

  /** Marks revoked (inside the caller's transaction, if any); returns whether it was live. */
  private markRevoked(project: ProjectId, sid: string, now: number): boolean {
    const r = this.db
      .prepare('UPDATE auth_sessions SET revoked_at = ?, grace = NULL WHERE project = ? AND id = ? AND revoked_at IS NULL')
      .run(now, project, sid);
    return r.changes > 0;
  }

  /** Revocations from `since` (ms) on, for an in-process list reloaded at start. */
  revokedSince(since: number): Array<{ project: ProjectId; id: string; revoked_at: number }> {
    return this.db.prepare('SELECT project, id, revoked_at FROM auth_sessions WHERE revoked_at >= ?').all(since) as Array<{
      project: ProjectId;
      id: string;
      revoked_at: number;
    }>;
  }

  async create(project: ProjectId, s: NewSession): Promise<void> {
    const tx = this.db.transaction(() => {
      this.db
        .prepare(
          `INSERT INTO auth_sessions (project, id, user_id, created_at, expires_at, current_hash, aal, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(project, s.id, s.user_id, s.now, s.expires_at, s.refresh_hash, s.aal ?? 1, s.now);
      this.db.prepare('INSERT INTO auth_refresh_tokens (project, hash, sid) VALUES (?, ?, ?)').run(project, s.refresh_hash, s.id);
    });
    tx.immediate();
    this.prunes.maybeRun(s.now);
  }

  /**
   * Forgets families that ended long enough ago that no token of theirs can still be presented
   * usefully, with their refresh tokens: started by a new session at most once an hour
   * (CleanupSchedule), in steps of the tables' row order (sweepInSteps) — sessions, then the
   * tokens whose session is gone. One DELETE of the whole join read every session and token
   * inside that sign-in, holding the write lock of auth.db (≈0.2 s at 200k sessions, even with
   * nothing to delete), and indexes that find them at once (on `expires_at`, on the tokens'
   * session) made every refresh ≈5–8 % slower.
   */
  private async pruneEnded(now: number): Promise<void> {
    const cutoff = now - RETENTION_MS;
    const stopped = () => !this.db.open;
    const stepEnd = (table: string) => {
      const end = this.db.prepare(`SELECT max(rowid) FROM (SELECT rowid FROM ${table} WHERE rowid > ? ORDER BY rowid LIMIT ?)`).pluck();
      return (after: number, limit: number) => (end.get(after, limit) as number | null) ?? null;
    };
    const endedSessions = this.db.prepare(
      'DELETE FROM auth_sessions WHERE rowid > ? AND rowid <= ? AND (expires_at < ? OR revoked_at < ?)',
    );
    const orphanTokens = this.db.prepare(
      `DELETE FROM auth_refresh_tokens AS t WHERE rowid > ? AND rowid <= ?
         AND NOT EXISTS (SELECT 1 FROM auth_sessions s WHERE s.project = t.project AND s.id = t.sid)`,
    );
    await sweepInSteps(0, stepEnd('auth_sessions'), (after, last) => endedSessions.run(after, last, cutoff, cutoff), stopped, PRUNE_STEP);
    await sweepInSteps(0, stepEnd('auth_refresh_tokens'), (after, last) => orphanTokens.run(after, last), stopped, PRUNE_STEP);
  }

  async rotate(project: ProjectId, rot: Rotation): Promise<RotationOutcome> {
    const tx = this.db.transaction((): RotationOutcome => {
      const t = this.db
        .prepare('SELECT sid FROM auth_refresh_tokens WHERE project = ? AND hash = ?')
        .get(project, rot.presented_hash) as { sid: string } | undefined;
      const s = t && this.row(project, t.sid);
      if (!s || s.revoked_at !== null || s.expires_at <= rot.now) return { outcome: 'invalid' };
      if (s.current_hash === rot.presented_hash) {
        this.db
          .prepare(
            `UPDATE auth_sessions SET current_hash = ?, parent_hash = ?, grace = ?, rotated_at = ?, expires_at = ?, updated_at = ?
             WHERE project = ? AND id = ?`,
          )
          .run(rot.next_hash, rot.presented_hash, rot.next_grace, rot.now, rot.next_expires_at, rot.now, project, s.id);
        this.db.prepare('INSERT INTO auth_refresh_tokens (project, hash, sid) VALUES (?, ?, ?)').run(project, rot.next_hash, s.id);
        return { outcome: 'rotated', session: { ...info(s), expires_at: rot.next_expires_at } };
      }
      if (s.parent_hash === rot.presented_hash && s.grace !== null && s.rotated_at !== null && rot.now - s.rotated_at <= rot.grace_ms) {
        return { outcome: 'grace', session: info(s), grace: s.grace };
      }
      this.markRevoked(project, s.id, rot.now);
      return { outcome: 'reused', session: info(s) };
    });
    return tx.immediate();
  }

  async getActive(project: ProjectId, sid: string, now: number): Promise<SessionInfo | null> {
    const s = this.row(project, sid);
    return s && s.revoked_at === null && s.expires_at > now ? info(s) : null;
  }

  async revokeByRefreshHash(project: ProjectId, refreshHash: string, now: number): Promise<{ sid: string; live: boolean } | null> {
    const t = this.db
      .prepare('SELECT sid FROM auth_refresh_tokens WHERE project = ? AND hash = ?')
      .get(project, refreshHash) as { sid: string } | undefined;
    if (!t) return null;
    return { sid: t.sid, live: this.markRevoked(project, t.sid, now) };
  }

  async revoke(project: ProjectId, sid: string, now: number): Promise<boolean> {
    return this.markRevoked(project, sid, now);
  }

  async revokeUser(project: ProjectId, userId: string, now: number): Promise<string[]> {
    const tx = this.db.transaction((): string[] => {
      const rows = this.db
        .prepare('SELECT id FROM auth_sessions WHERE project = ? AND user_id = ? AND revoked_at IS NULL')
        .all(project, userId) as Array<{ id: string }>;
      for (const r of rows) this.markRevoked(project, r.id, now);
      return rows.map((r) => r.id);
    });
    return tx.immediate();
  }

  async purgeProject(project: ProjectId): Promise<string[]> {
    const tx = this.db.transaction((): string[] => {
      const live = this.db
        .prepare('SELECT id FROM auth_sessions WHERE project = ? AND revoked_at IS NULL')
        .all(project) as Array<{ id: string }>;
      this.db.prepare('DELETE FROM auth_refresh_tokens WHERE project = ?').run(project);
      this.db.prepare('DELETE FROM auth_sessions WHERE project = ?').run(project);
      return live.map((r) => r.id);
    });
    return tx.immediate();
  }

  async changedSince(since: number, now: number, limit: number, after?: StoredSession): Promise<StoredSession[]> {
    const rows = (
      after
        ? this.db
            .prepare(
              `SELECT * FROM auth_sessions WHERE updated_at >= ? AND (updated_at, project, id) > (?, ?, ?)
                 AND revoked_at IS NULL AND expires_at > ? ORDER BY updated_at, project, id LIMIT ?`,
            )
            .all(since, after.updated_at, after.project, after.id, now, limit)
        : this.db
            .prepare(
              `SELECT * FROM auth_sessions WHERE updated_at >= ? AND revoked_at IS NULL AND expires_at > ?
                 ORDER BY updated_at, project, id LIMIT ?`,
            )
            .all(since, now, limit)
    ) as SessionRow[];
    return rows.map((r) => ({ ...info(r), project: r.project, updated_at: r.updated_at }));
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }
}
