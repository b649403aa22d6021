import type { ProjectId, SqliteDatabase } from '@plinth/shared';
import type { FactorStore, MfaChallengeRecord, TotpFactor } from './factor-store';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS auth_mfa_factors (
  project TEXT NOT NULL, user_id TEXT NOT NULL, secret_sealed TEXT NOT NULL, status TEXT NOT NULL,
  created_at INTEGER NOT NULL, confirmed_at INTEGER, last_step INTEGER NOT NULL, recovery_hashes TEXT NOT NULL,
  PRIMARY KEY (project, user_id)
);
CREATE TABLE IF NOT EXISTS auth_mfa_challenges (
  project TEXT NOT NULL, hash TEXT NOT NULL, user_id TEXT NOT NULL, expires_at INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (project, hash)
);
CREATE INDEX IF NOT EXISTS auth_mfa_challenges_user ON auth_mfa_challenges (project, user_id);
CREATE INDEX IF NOT EXISTS auth_mfa_challenges_expiry ON auth_mfa_challenges (expires_at);
`;

interface FactorRow extends Omit<TotpFactor, 'recovery_hashes' | 'status'> {
  status: string;
  recovery_hashes: string;
}

function fromRow(r: FactorRow): TotpFactor {
  return { ...r, status: r.status === 'active' ? 'active' : 'pending', recovery_hashes: JSON.parse(r.recovery_hashes) as string[] };
}

/** Deletes a user's factor and challenges; runs inside the caller's transaction (SqliteUserStore.deleteUser). */
export function deleteFactorsOfUser(db: SqliteDatabase, project: ProjectId | string, userId: string): boolean {
  db.prepare('DELETE FROM auth_mfa_challenges WHERE project = ? AND user_id = ?').run(project, userId);
  return db.prepare('DELETE FROM auth_mfa_factors WHERE project = ? AND user_id = ?').run(project, userId).changes > 0;
}

/** The tables SqliteUserStore.purgeProject also empties for the project. */
export const FACTOR_TABLES = ['auth_mfa_factors', 'auth_mfa_challenges'] as const;

/** FactorStore on SQLite (standalone mode), in the users' database: every method is one transaction. */
export class SqliteFactorStore implements FactorStore {
  constructor(private readonly db: SqliteDatabase) {
    db.exec(SCHEMA);
  }

  async getFactor(project: ProjectId, userId: string): Promise<TotpFactor | null> {
    const row = this.db.prepare('SELECT * FROM auth_mfa_factors WHERE project = ? AND user_id = ?').get(project, userId) as FactorRow | undefined;
    if (!row) return null;
    const { project: _p, ...factor } = row as FactorRow & { project: string };
    return fromRow(factor);
  }

  async putPendingFactor(project: ProjectId, f: TotpFactor): Promise<boolean> {
    const r = this.db
      .prepare(
        `INSERT INTO auth_mfa_factors (project, user_id, secret_sealed, status, created_at, confirmed_at, last_step, recovery_hashes)
         VALUES (@project, @user_id, @secret_sealed, 'pending', @created_at, NULL, @last_step, '[]')
         ON CONFLICT (project, user_id) DO UPDATE SET secret_sealed = excluded.secret_sealed, created_at = excluded.created_at,
           last_step = excluded.last_step, recovery_hashes = '[]' WHERE status = 'pending'`,
      )
      .run({ project, user_id: f.user_id, secret_sealed: f.secret_sealed, created_at: f.created_at, last_step: f.last_step });
    return r.changes > 0;
  }

  async activateFactor(project: ProjectId, userId: string, secretSealed: string, step: number, recoveryHashes: string[], now: number): Promise<boolean> {
    const r = this.db
      .prepare(
        `UPDATE auth_mfa_factors SET status = 'active', confirmed_at = ?, last_step = ?, recovery_hashes = ?
         WHERE project = ? AND user_id = ? AND status = 'pending' AND secret_sealed = ?`,
      )
      .run(now, step, JSON.stringify(recoveryHashes), project, userId, secretSealed);
    return r.changes > 0;
  }

  async useStep(project: ProjectId, userId: string, step: number): Promise<boolean> {
    const r = this.db
      .prepare(`UPDATE auth_mfa_factors SET last_step = ? WHERE project = ? AND user_id = ? AND status = 'active' AND last_step < ?`)
      .run(step, project, userId, step);
    return r.changes > 0;
  }

  async useRecoveryCode(project: ProjectId, userId: string, hash: string): Promise<boolean> {
    return this.db.transaction((): boolean => {
      const row = this.db
        .prepare(`SELECT recovery_hashes FROM auth_mfa_factors WHERE project = ? AND user_id = ? AND status = 'active'`)
        .get(project, userId) as { recovery_hashes: string } | undefined;
      const hashes = row ? (JSON.parse(row.recovery_hashes) as string[]) : [];
      if (!hashes.includes(hash)) return false;
      this.db
        .prepare('UPDATE auth_mfa_factors SET recovery_hashes = ? WHERE project = ? AND user_id = ?')
        .run(JSON.stringify(hashes.filter((h) => h !== hash)), project, userId);
      return true;
    }).immediate();
  }

  async deleteFactor(project: ProjectId, userId: string): Promise<boolean> {
    return this.db.transaction(() => deleteFactorsOfUser(this.db, project, userId)).immediate();
  }

  async putChallenge(project: ProjectId, c: MfaChallengeRecord): Promise<void> {
    this.db.transaction(() => {
      // Long-expired challenges (an hour before this one ends) go, through the expiry index, as new ones arrive.
      this.db.prepare('DELETE FROM auth_mfa_challenges WHERE expires_at <= ?').run(c.expires_at - 3_600_000);
      this.db
        .prepare('INSERT INTO auth_mfa_challenges (project, hash, user_id, expires_at, attempts) VALUES (?, ?, ?, ?, 0)')
        .run(project, c.hash, c.user_id, c.expires_at);
    }).immediate();
  }

  async attemptChallenge(project: ProjectId, hash: string, now: number, maxAttempts: number): Promise<string | null> {
    const row = this.db
      .prepare(
        `UPDATE auth_mfa_challenges SET attempts = attempts + 1
         WHERE project = ? AND hash = ? AND expires_at > ? AND attempts < ? RETURNING user_id`,
      )
      .get(project, hash, now, maxAttempts) as { user_id: string } | undefined;
    return row?.user_id ?? null;
  }

  async takeChallenge(project: ProjectId, hash: string, now: number): Promise<string | null> {
    const row = this.db
      .prepare('DELETE FROM auth_mfa_challenges WHERE project = ? AND hash = ? RETURNING user_id, expires_at')
      .get(project, hash) as { user_id: string; expires_at: number } | undefined;
    return row && row.expires_at > now ? row.user_id : null;
  }
}
