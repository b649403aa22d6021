import { ConflictError, isSqliteUniqueViolation, migrateSqlite, type SqliteDatabase } from '@plinth/shared';
import type { OperatorSecrets } from '../operators/operator-secrets';
import { OPERATORS_COMPONENT, sqliteOperatorMigrations } from './operator-data-version';
import type { AuditEntry, AuditQuery, OperatorPatch, OperatorRecord, OperatorSessionRecord, OperatorStore } from './operator-store';

/** The tables as they were before the operators' data version 1 (its baseline). */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS operators (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL UNIQUE,
  role TEXT NOT NULL,
  status TEXT NOT NULL,
  password_hash TEXT NOT NULL,
  totp_secret TEXT,
  totp_pending TEXT,
  totp_last_step INTEGER,
  created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS operator_sessions (
  id TEXT PRIMARY KEY,
  operator_id TEXT NOT NULL REFERENCES operators(id) ON DELETE CASCADE,
  token_hash TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  max_expires_at TEXT NOT NULL,
  address TEXT
);
CREATE INDEX IF NOT EXISTS operator_sessions_operator ON operator_sessions(operator_id);
CREATE TABLE IF NOT EXISTS audit_log (
  id TEXT PRIMARY KEY,
  at TEXT NOT NULL,
  actor_kind TEXT NOT NULL,
  actor_id TEXT,
  actor TEXT NOT NULL,
  project TEXT,
  method TEXT NOT NULL,
  path TEXT NOT NULL,
  status INTEGER NOT NULL,
  address TEXT
);
CREATE INDEX IF NOT EXISTS audit_log_at ON audit_log(at);
`;

const PATCHABLE = ['role', 'status', 'password_hash', 'totp_secret', 'totp_pending', 'totp_last_step'] as const;

/**
 * OperatorStore on the SQLite database of SqliteProjectStore (`gateway.db`), brought to the
 * operators' data version (operator-data-version.ts) when it opens.
 */
export class SqliteOperatorStore implements OperatorStore {
  private readonly stmt;

  constructor(
    private readonly db: SqliteDatabase,
    readonly secrets: OperatorSecrets,
  ) {
    migrateSqlite(db, { component: OPERATORS_COMPONENT, where: db.name, baseline: (d) => d.exec(SCHEMA), migrations: sqliteOperatorMigrations(secrets) });
    this.stmt = {
      insertOperator: db.prepare(
        `INSERT INTO operators (id, email, role, status, password_hash, totp_secret, totp_pending, totp_last_step, created_at)
         VALUES (@id, @email, @role, @status, @password_hash, @totp_secret, @totp_pending, @totp_last_step, @created_at)`,
      ),
      getOperator: db.prepare('SELECT * FROM operators WHERE id = ?'),
      operatorByEmail: db.prepare('SELECT * FROM operators WHERE email = ?'),
      listOperators: db.prepare('SELECT * FROM operators ORDER BY created_at, id'),
      deleteOperator: db.prepare('DELETE FROM operators WHERE id = ?'),
      insertSession: db.prepare(
        `INSERT INTO operator_sessions (id, operator_id, token_hash, created_at, expires_at, max_expires_at, address)
         VALUES (@id, @operator_id, @token_hash, @created_at, @expires_at, @max_expires_at, @address)`,
      ),
      sessionByHash: db.prepare('SELECT * FROM operator_sessions WHERE token_hash = ?'),
      allSessions: db.prepare('SELECT * FROM operator_sessions ORDER BY created_at DESC, id DESC'),
      sessionsOf: db.prepare('SELECT * FROM operator_sessions WHERE operator_id = ? ORDER BY created_at DESC, id DESC'),
      setExpiry: db.prepare('UPDATE operator_sessions SET expires_at = ? WHERE id = ?'),
      deleteSession: db.prepare('DELETE FROM operator_sessions WHERE id = ?'),
      deleteSessionsOf: db.prepare('DELETE FROM operator_sessions WHERE operator_id = ?'),
      pruneSessions: db.prepare('DELETE FROM operator_sessions WHERE expires_at < ?'),
      insertAudit: db.prepare(
        `INSERT INTO audit_log (id, at, actor_kind, actor_id, actor, project, method, path, status, address)
         VALUES (@id, @at, @actor_kind, @actor_id, @actor, @project, @method, @path, @status, @address)`,
      ),
      pruneAudit: db.prepare('DELETE FROM audit_log WHERE at < ?'),
    };
  }

  async createOperator(op: OperatorRecord): Promise<void> {
    try {
      this.stmt.insertOperator.run(op);
    } catch (err) {
      if (isSqliteUniqueViolation(err)) throw new ConflictError(`An operator with e-mail ${op.email} already exists.`);
      throw err;
    }
  }

  async getOperator(id: string): Promise<OperatorRecord | null> {
    return (this.stmt.getOperator.get(String(id)) as OperatorRecord | undefined) ?? null;
  }

  async findOperatorByEmail(email: string): Promise<OperatorRecord | null> {
    return (this.stmt.operatorByEmail.get(String(email)) as OperatorRecord | undefined) ?? null;
  }

  async listOperators(): Promise<OperatorRecord[]> {
    return this.stmt.listOperators.all() as OperatorRecord[];
  }

  async updateOperator(id: string, patch: OperatorPatch): Promise<boolean> {
    const fields = PATCHABLE.filter((f) => patch[f] !== undefined);
    if (fields.length === 0) return (await this.getOperator(id)) !== null;
    const sql = `UPDATE operators SET ${fields.map((f) => `${f} = @${f}`).join(', ')} WHERE id = @id`;
    return this.db.prepare(sql).run({ ...Object.fromEntries(fields.map((f) => [f, patch[f]])), id: String(id) }).changes > 0;
  }

  async deleteOperator(id: string): Promise<boolean> {
    return this.db.transaction(() => {
      this.stmt.deleteSessionsOf.run(String(id));
      return this.stmt.deleteOperator.run(String(id)).changes > 0;
    }).immediate();
  }

  async createSession(s: OperatorSessionRecord): Promise<void> {
    this.stmt.insertSession.run(s);
  }

  async findSessionByHash(tokenHash: string): Promise<OperatorSessionRecord | null> {
    return (this.stmt.sessionByHash.get(String(tokenHash)) as OperatorSessionRecord | undefined) ?? null;
  }

  async listSessions(operatorId?: string): Promise<OperatorSessionRecord[]> {
    return (operatorId === undefined ? this.stmt.allSessions.all() : this.stmt.sessionsOf.all(operatorId)) as OperatorSessionRecord[];
  }

  async setSessionExpiry(id: string, expiresAt: string): Promise<boolean> {
    return this.stmt.setExpiry.run(expiresAt, String(id)).changes > 0;
  }

  async deleteSession(id: string): Promise<boolean> {
    return this.stmt.deleteSession.run(String(id)).changes > 0;
  }

  async deleteSessionsOf(operatorId: string): Promise<number> {
    return this.stmt.deleteSessionsOf.run(String(operatorId)).changes;
  }

  async pruneSessions(now: string): Promise<number> {
    return this.stmt.pruneSessions.run(now).changes;
  }

  async appendAudit(...entries: AuditEntry[]): Promise<void> {
    this.db.transaction(() => {
      for (const entry of entries) this.stmt.insertAudit.run(entry);
    })();
  }

  async queryAudit(q: AuditQuery): Promise<AuditEntry[]> {
    const where: string[] = [];
    const args: Record<string, string | number> = { limit: q.limit };
    if (q.actor !== undefined) {
      where.push('(actor_id = @actor OR actor = @actor)');
      args.actor = q.actor;
    }
    if (q.project !== undefined) {
      where.push('project = @project');
      args.project = q.project;
    }
    if (q.since !== undefined) {
      where.push('at >= @since');
      args.since = q.since;
    }
    if (q.until !== undefined) {
      where.push('at < @until');
      args.until = q.until;
    }
    if (q.before !== undefined) {
      where.push('id < @before');
      args.before = q.before;
    }
    const sql = `SELECT * FROM audit_log ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT @limit`;
    return this.db.prepare(sql).all(args) as AuditEntry[];
  }

  async pruneAudit(before: string): Promise<number> {
    return this.stmt.pruneAudit.run(before).changes;
  }
}
