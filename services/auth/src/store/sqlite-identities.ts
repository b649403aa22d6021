import { isSqliteUniqueViolation, type ProjectId, type SqliteDatabase } from '@plinth/shared';
import { identityTakenError, type IdentityRecord } from './user-store';

/** Linked provider accounts (docs/auth.md "Linked identities"); SqliteUserStore deletes them with the user and the project. */
export const IDENTITIES_SCHEMA = `
CREATE TABLE IF NOT EXISTS auth_identities (
  project TEXT NOT NULL, provider TEXT NOT NULL, subject TEXT NOT NULL, user_id TEXT NOT NULL,
  email TEXT, email_verified INTEGER NOT NULL, created_at TEXT NOT NULL,
  PRIMARY KEY (project, provider, subject)
);
CREATE UNIQUE INDEX IF NOT EXISTS auth_identities_user ON auth_identities (project, user_id, provider);
`;

interface IdentityRow {
  provider: string;
  subject: string;
  user_id: string;
  email: string | null;
  email_verified: number;
  created_at: string;
}

const COLUMNS = 'provider, subject, user_id, email, email_verified, created_at';

function fromRow(r: IdentityRow): IdentityRecord {
  return { ...r, email_verified: r.email_verified === 1 };
}

/** The identity statements of SqliteUserStore, on its database. */
export class SqliteIdentities {
  constructor(private readonly db: SqliteDatabase) {
    db.exec(IDENTITIES_SCHEMA);
  }

  link(project: ProjectId, identity: IdentityRecord): void {
    try {
      this.db
        .prepare(`INSERT INTO auth_identities (project, ${COLUMNS}) VALUES (@project, @provider, @subject, @user_id, @email, @email_verified, @created_at)`)
        .run({ project, ...identity, email_verified: identity.email_verified ? 1 : 0 });
    } catch (err) {
      if (isSqliteUniqueViolation(err)) throw identityTakenError();
      throw err;
    }
  }

  get(project: ProjectId, provider: string, subject: string): IdentityRecord | null {
    const row = this.db.prepare(`SELECT ${COLUMNS} FROM auth_identities WHERE project = ? AND provider = ? AND subject = ?`).get(project, provider, subject) as
      | IdentityRow
      | undefined;
    return row ? fromRow(row) : null;
  }

  list(project: ProjectId, userId: string): IdentityRecord[] {
    const rows = this.db.prepare(`SELECT ${COLUMNS} FROM auth_identities WHERE project = ? AND user_id = ? ORDER BY created_at, provider`).all(project, userId) as IdentityRow[];
    return rows.map(fromRow);
  }

  unlink(project: ProjectId, userId: string, provider: string): boolean {
    return this.db.prepare('DELETE FROM auth_identities WHERE project = ? AND user_id = ? AND provider = ?').run(project, userId, provider).changes > 0;
  }

  /** Inside the caller's transaction (deleteUser). */
  deleteOfUser(project: ProjectId, userId: string): void {
    this.db.prepare('DELETE FROM auth_identities WHERE project = ? AND user_id = ?').run(project, userId);
  }
}
