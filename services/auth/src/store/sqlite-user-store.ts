import { deleteInSteps, isSqliteUniqueViolation, migrateSqlite, type ProjectId, type SqliteDatabase } from '@plinth/shared';
import type { AuthSettings } from '../domain/auth-settings';
import { SqliteIdentities } from './sqlite-identities';
import { authSqliteMigrations } from './auth-migrations';
import type {
  IdentityRecord,
  OneTimeToken,
  OneTimeTokenKind,
  OtpIssue,
  SigningKeyRecord,
  UserListQuery,
  UserPatch,
  UserRecord,
  UserStore,
} from './user-store';
import { emailTakenError, foldCase, mailSlotKey, ONE_TIME_TOKEN_KINDS } from './user-store';
import { deleteFactorsOfUser, FACTOR_TABLES, SqliteFactorStore } from './sqlite-factor-store';
import { SqliteUserEvents } from './sqlite-user-events';
import { SqliteMailOutbox } from './sqlite-mail-outbox';
import { userEvent } from './user-event';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS auth_users (
  project TEXT NOT NULL, id TEXT NOT NULL, email TEXT, email_verified INTEGER NOT NULL,
  display_name TEXT, photo_url TEXT, status TEXT NOT NULL, password_hash TEXT, metadata TEXT NOT NULL,
  last_sign_in_at TEXT, created_at TEXT NOT NULL,
  PRIMARY KEY (project, id)
);
CREATE UNIQUE INDEX IF NOT EXISTS auth_users_email ON auth_users (project, email);
CREATE INDEX IF NOT EXISTS auth_users_created ON auth_users (project, created_at, id);
CREATE TABLE IF NOT EXISTS auth_one_time_tokens (
  project TEXT NOT NULL, token_hash TEXT NOT NULL, kind TEXT NOT NULL, user_id TEXT NOT NULL,
  expires_at INTEGER NOT NULL, PRIMARY KEY (project, token_hash)
);
CREATE TABLE IF NOT EXISTS auth_otps (
  project TEXT NOT NULL, email TEXT NOT NULL, code_hash TEXT NOT NULL, expires_at INTEGER NOT NULL,
  sent_at INTEGER NOT NULL, attempts INTEGER NOT NULL, PRIMARY KEY (project, email)
);
CREATE TABLE IF NOT EXISTS auth_signing_keys (
  project TEXT NOT NULL, kid TEXT NOT NULL, private_pem TEXT NOT NULL, public_jwk TEXT NOT NULL,
  created_at INTEGER NOT NULL, verify_until INTEGER, PRIMARY KEY (project, kid)
);
CREATE TABLE IF NOT EXISTS auth_settings (project TEXT PRIMARY KEY, settings TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS auth_mail_slots (
  project TEXT NOT NULL, key TEXT NOT NULL, sent_at INTEGER NOT NULL, PRIMARY KEY (project, key)
);
CREATE INDEX IF NOT EXISTS auth_one_time_tokens_user ON auth_one_time_tokens (project, user_id);
CREATE INDEX IF NOT EXISTS auth_one_time_tokens_expiry ON auth_one_time_tokens (expires_at);
`;


interface UserRow {
  id: string;
  email: string | null;
  email_verified: number;
  display_name: string | null;
  photo_url: string | null;
  status: UserRecord['status'];
  is_anonymous: number;
  password_hash: string | null;
  metadata: string;
  claims: string;
  last_sign_in_at: string | null;
  created_at: string;
}

interface KeyRow {
  kid: string;
  private_pem: string;
  public_jwk: string;
  created_at: number;
  verify_until: number | null;
}

const USER_COLUMNS =
  'id, email, email_verified, display_name, photo_url, status, is_anonymous, password_hash, metadata, claims, last_sign_in_at, created_at';

function fromRow(r: UserRow): UserRecord {
  return {
    ...r,
    email_verified: r.email_verified === 1,
    is_anonymous: r.is_anonymous === 1,
    metadata: JSON.parse(r.metadata) as UserRecord['metadata'],
    claims: JSON.parse(r.claims) as UserRecord['claims'],
  };
}

function toRow(u: UserRecord): UserRow {
  return {
    ...u,
    email: u.email === null ? null : foldCase(u.email),
    email_verified: u.email_verified ? 1 : 0,
    is_anonymous: u.is_anonymous ? 1 : 0,
    metadata: JSON.stringify(u.metadata),
    claims: JSON.stringify(u.claims ?? {}),
  };
}

function emailTaken(err: unknown): never {
  if (isSqliteUniqueViolation(err)) throw emailTakenError();
  throw err;
}

/** UserStore on SQLite (standalone mode). All methods are synchronous underneath, hence atomic. */
export class SqliteUserStore implements UserStore {
  readonly factors: SqliteFactorStore;
  readonly events: SqliteUserEvents;
  readonly mails: SqliteMailOutbox;
  private readonly identities: SqliteIdentities;

  constructor(private readonly db: SqliteDatabase) {
    migrateSqlite(db, { component: 'auth', where: db.name, baseline: () => db.exec(SCHEMA), migrations: authSqliteMigrations(SCHEMA) });
    // After the version check: the factor and identity tables are made as they are (no migration has changed them yet).
    this.factors = new SqliteFactorStore(db);
    this.identities = new SqliteIdentities(db);
    this.events = new SqliteUserEvents(db);
    this.mails = new SqliteMailOutbox(db);
    // A search folds case as the MongoDB store does (foldCase); SQLite's lower() is ASCII-only.
    db.function('plinth_fold', { deterministic: true }, (s: unknown) => (typeof s === 'string' ? foldCase(s) : s));
  }

  async createUser(project: ProjectId, user: UserRecord): Promise<void> {
    const create = this.db.transaction(() => {
      this.db
        .prepare(
          `INSERT INTO auth_users (project, ${USER_COLUMNS}) VALUES (@project, @id, @email, @email_verified, @display_name,
           @photo_url, @status, @is_anonymous, @password_hash, @metadata, @claims, @last_sign_in_at, @created_at)`,
        )
        .run({ project, ...toRow(user) });
      const now = Date.now();
      this.events.append(userEvent(project, 'user.created', user, now), now);
    });
    try {
      create.immediate();
    } catch (err) {
      emailTaken(err);
    }
  }

  async getUser(project: ProjectId, id: string): Promise<UserRecord | null> {
    const row = this.db.prepare(`SELECT ${USER_COLUMNS} FROM auth_users WHERE project = ? AND id = ?`).get(project, id) as
      | UserRow
      | undefined;
    return row ? fromRow(row) : null;
  }

  async getUserByEmail(project: ProjectId, email: string): Promise<UserRecord | null> {
    const row = this.db
      .prepare(`SELECT ${USER_COLUMNS} FROM auth_users WHERE project = ? AND email = ?`)
      .get(project, email.toLowerCase()) as UserRow | undefined;
    return row ? fromRow(row) : null;
  }

  async updateUser(project: ProjectId, id: string, patch: UserPatch): Promise<UserRecord | null> {
    const update = this.db.transaction((): UserRecord | null => {
      const row = this.db.prepare(`SELECT ${USER_COLUMNS} FROM auth_users WHERE project = ? AND id = ?`).get(project, id) as
        | UserRow
        | undefined;
      if (!row) return null;
      const next: UserRecord = { ...fromRow(row), ...patch, id };
      const r = toRow(next);
      this.db
        .prepare(
          `UPDATE auth_users SET email = @email, email_verified = @email_verified, display_name = @display_name,
           photo_url = @photo_url, status = @status, is_anonymous = @is_anonymous, password_hash = @password_hash, metadata = @metadata,
           claims = @claims, last_sign_in_at = @last_sign_in_at WHERE project = @project AND id = @id`,
        )
        .run({ project, ...r });
      return fromRow(r);
    });
    try {
      return update.immediate();
    } catch (err) {
      return emailTaken(err);
    }
  }

  async deleteUser(project: ProjectId, id: string): Promise<boolean> {
    const del = this.db.transaction(() => {
      this.db.prepare('DELETE FROM auth_one_time_tokens WHERE project = ? AND user_id = ?').run(project, id);
      this.identities.deleteOfUser(project, id);
      const slot = this.db.prepare('DELETE FROM auth_mail_slots WHERE project = ? AND key = ?');
      for (const kind of ONE_TIME_TOKEN_KINDS) slot.run(project, mailSlotKey(kind, id));
      deleteFactorsOfUser(this.db, project, id);
      const row = this.db.prepare(`DELETE FROM auth_users WHERE project = ? AND id = ? RETURNING ${USER_COLUMNS}`).get(project, id) as
        | UserRow
        | undefined;
      if (!row) return false;
      const now = Date.now();
      this.events.append(userEvent(project, 'user.deleted', fromRow(row), now), now);
      return true;
    });
    return del.immediate();
  }

  async listUsers(project: ProjectId, query: UserListQuery): Promise<{ users: UserRecord[]; total: number }> {
    const search = query.search ? foldCase(query.search) : '';
    // E-mails are stored folded; names are folded here, in JavaScript, as on MongoDB.
    const anonymous = query.anonymous === undefined ? -1 : query.anonymous ? 1 : 0;
    const where = `project = @project AND (@search = '' OR instr(email, @search) > 0
      OR instr(plinth_fold(coalesce(display_name, '')), @search) > 0) AND (@anonymous = -1 OR is_anonymous = @anonymous)`;
    const { total } = this.db.prepare(`SELECT count(*) AS total FROM auth_users WHERE ${where}`).get({ project, search, anonymous }) as {
      total: number;
    };
    const rows = this.db
      .prepare(`SELECT ${USER_COLUMNS} FROM auth_users WHERE ${where} ORDER BY created_at, id LIMIT @limit OFFSET @offset`)
      .all({ project, search, anonymous, limit: query.limit, offset: query.offset }) as UserRow[];
    return { users: rows.map(fromRow), total };
  }

  async deleteIdleAnonymousUsers(idleBefore: string): Promise<number> {
    // Anonymous users have no address, hence no one-time tokens or mail slots; deleted anyway, as deleteUser does.
    const step = this.db.transaction((limit: number): number => {
      const idle = this.db
        .prepare('SELECT project, id FROM auth_users WHERE is_anonymous = 1 AND last_sign_in_at < ? LIMIT ?')
        .all(idleBefore, limit) as Array<{ project: string; id: string }>;
      const tokens = this.db.prepare('DELETE FROM auth_one_time_tokens WHERE project = ? AND user_id = ?');
      const slot = this.db.prepare('DELETE FROM auth_mail_slots WHERE project = ? AND key = ?');
      const user = this.db.prepare('DELETE FROM auth_users WHERE project = ? AND id = ?');
      for (const { project, id } of idle) {
        tokens.run(project, id);
        for (const kind of ONE_TIME_TOKEN_KINDS) slot.run(project, mailSlotKey(kind, id));
        deleteFactorsOfUser(this.db, project, id);
        user.run(project, id);
      }
      return idle.length;
    });
    let deleted = 0;
    await deleteInSteps((limit) => {
      const n = step.immediate(limit);
      deleted += n;
      return n;
    });
    return deleted;
  }

  async putOneTimeToken(project: ProjectId, token: OneTimeToken): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO auth_one_time_tokens (project, token_hash, kind, user_id, expires_at, email, sid, data)
         VALUES (@project, @token_hash, @kind, @user_id, @expires_at, @email, @sid, @data)`,
      )
      .run({ project, ...token, email: token.email ?? null, sid: token.sid ?? null, data: token.data ?? null });
  }

  async consumeOneTimeToken(project: ProjectId, kind: OneTimeTokenKind, tokenHash: string, now: number): Promise<string | null> {
    return (await this.takeOneTimeToken(project, kind, tokenHash, now))?.user_id ?? null;
  }

  async takeOneTimeToken(project: ProjectId, kind: OneTimeTokenKind, tokenHash: string, now: number): Promise<OneTimeToken | null> {
    const consume = this.db.transaction((): OneTimeToken | null => {
      this.db.prepare('DELETE FROM auth_one_time_tokens WHERE expires_at <= ?').run(now);
      const row = this.db
        .prepare(
          `DELETE FROM auth_one_time_tokens WHERE project = ? AND token_hash = ? AND kind = ?
           RETURNING token_hash, kind, user_id, expires_at, email, sid, data`,
        )
        .get(project, tokenHash, kind) as (Omit<OneTimeToken, 'email' | 'sid' | 'data'> & { email: string | null; sid: string | null; data: string | null }) | undefined;
      if (!row) return null;
      const { email, sid, data, ...token } = row;
      return { ...token, ...(email === null ? {} : { email }), ...(sid === null ? {} : { sid }), ...(data === null ? {} : { data }) };
    });
    return consume.immediate();
  }

  async deleteOneTimeTokens(project: ProjectId, userId: string, kinds: readonly OneTimeTokenKind[]): Promise<void> {
    const del = this.db.prepare('DELETE FROM auth_one_time_tokens WHERE project = ? AND user_id = ? AND kind = ?');
    this.db.transaction(() => {
      for (const kind of kinds) del.run(project, userId, kind);
    }).immediate();
  }

  async linkIdentity(project: ProjectId, identity: IdentityRecord): Promise<void> {
    this.identities.link(project, identity);
  }

  async getIdentity(project: ProjectId, provider: string, subject: string): Promise<IdentityRecord | null> {
    return this.identities.get(project, provider, subject);
  }

  async listIdentities(project: ProjectId, userId: string): Promise<IdentityRecord[]> {
    return this.identities.list(project, userId);
  }

  async unlinkIdentity(project: ProjectId, userId: string, provider: string): Promise<boolean> {
    return this.identities.unlink(project, userId, provider);
  }

  async deleteOtp(project: ProjectId, email: string): Promise<void> {
    this.db.prepare('DELETE FROM auth_otps WHERE project = ? AND email = ?').run(project, email.toLowerCase());
  }

  async claimMailSlot(project: ProjectId, key: string, now: number, intervalMs: number): Promise<boolean> {
    const claimed = this.db
      .prepare(
        `INSERT INTO auth_mail_slots (project, key, sent_at) VALUES (@project, @key, @now)
         ON CONFLICT (project, key) DO UPDATE SET sent_at = excluded.sent_at WHERE sent_at <= @cutoff`,
      )
      .run({ project, key, now, cutoff: now - intervalMs });
    return claimed.changes > 0;
  }

  async issueOtp(project: ProjectId, otp: OtpIssue): Promise<boolean> {
    const issue = this.db.transaction((): boolean => {
      const prev = this.db
        .prepare('SELECT sent_at FROM auth_otps WHERE project = ? AND email = ?')
        .get(project, otp.email.toLowerCase()) as { sent_at: number } | undefined;
      if (prev && prev.sent_at > otp.resend_after) return false;
      this.db
        .prepare(
          `INSERT OR REPLACE INTO auth_otps (project, email, code_hash, expires_at, sent_at, attempts)
           VALUES (?, ?, ?, ?, ?, 0)`,
        )
        .run(project, otp.email.toLowerCase(), otp.code_hash, otp.expires_at, otp.now);
      return true;
    });
    return issue.immediate();
  }

  async redeemOtp(project: ProjectId, email: string, codeHash: string, now: number, maxAttempts: number): Promise<boolean> {
    const redeem = this.db.transaction((): boolean => {
      const row = this.db
        .prepare(
          `UPDATE auth_otps SET attempts = attempts + 1
           WHERE project = ? AND email = ? AND expires_at > ? AND attempts < ? RETURNING code_hash`,
        )
        .get(project, email.toLowerCase(), now, maxAttempts) as { code_hash: string } | undefined;
      if (!row || row.code_hash !== codeHash) return false;
      this.db.prepare('DELETE FROM auth_otps WHERE project = ? AND email = ?').run(project, email.toLowerCase());
      return true;
    });
    return redeem.immediate();
  }

  async listSigningKeys(project: ProjectId): Promise<SigningKeyRecord[]> {
    const rows = this.db
      .prepare(
        `SELECT kid, private_pem, public_jwk, created_at, verify_until FROM auth_signing_keys
         WHERE project = ? ORDER BY created_at DESC, kid DESC`,
      )
      .all(project) as KeyRow[];
    return rows.map((r) => ({ ...r, public_jwk: JSON.parse(r.public_jwk) as SigningKeyRecord['public_jwk'] }));
  }

  async addSigningKey(project: ProjectId, key: SigningKeyRecord): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO auth_signing_keys (project, kid, private_pem, public_jwk, created_at, verify_until)
         VALUES (?, ?, ?, ?, ?, ?)`,
      )
      .run(project, key.kid, key.private_pem, JSON.stringify(key.public_jwk), key.created_at, key.verify_until);
  }

  async retireSigningKeys(project: ProjectId, keepKid: string, verifyUntil: number): Promise<void> {
    this.db
      .prepare('UPDATE auth_signing_keys SET verify_until = ? WHERE project = ? AND kid != ? AND verify_until IS NULL')
      .run(verifyUntil, project, keepKid);
  }

  async getSettings(project: ProjectId): Promise<AuthSettings | null> {
    const row = this.db.prepare('SELECT settings FROM auth_settings WHERE project = ?').get(project) as
      | { settings: string }
      | undefined;
    return row ? (JSON.parse(row.settings) as AuthSettings) : null;
  }

  async putSettings(project: ProjectId, settings: AuthSettings): Promise<void> {
    this.db
      .prepare('INSERT INTO auth_settings (project, settings) VALUES (?, ?) ON CONFLICT (project) DO UPDATE SET settings = excluded.settings')
      .run(project, JSON.stringify(settings));
  }

  async purgeProject(project: ProjectId): Promise<void> {
    this.db.transaction(() => {
      for (const table of ['auth_users', 'auth_identities', 'auth_one_time_tokens', 'auth_otps', 'auth_mail_slots', 'auth_signing_keys', 'auth_settings', 'auth_user_events', 'auth_mail_outbox', ...FACTOR_TABLES]) {
        this.db.prepare(`DELETE FROM ${table} WHERE project = ?`).run(project);
      }
    })();
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    // The database handle belongs to the caller (it is shared with the session store and the outbox).
  }
}
