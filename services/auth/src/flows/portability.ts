/**
 * Moving a project's users to another deployment (docs/operators.md "Moving a project"): an
 * export page of users as stored — the bcrypt hash, identities, the TOTP factor with its secret
 * opened (another deployment seals factor secrets with its own key) — and an import that stores
 * such users again with the same ids, hashes and recovery codes, so every user signs in there
 * with the same password and second factor. Secret key only (the routes check it), bounded
 * pages, and nothing here is logged.
 */
import { ConflictError, InvalidRequestError, type JsonValue, type ProjectId } from '@plinth/shared';
import type { IdentityRecord, UserRecord } from '../store/user-store';
import type { AuthContext } from './auth-context';

/** At most this many users per export page or import request. */
export const PORTABLE_USERS_LIMIT = 500;

export interface PortableFactor {
  status: 'active';
  /** The TOTP secret itself (base32): the archive encrypts it under the operator's passphrase. */
  secret: string;
  created_at: number;
  confirmed_at: number | null;
  last_step: number;
  recovery_hashes: string[];
}

export type PortableUser = UserRecord & {
  identities: Array<Omit<IdentityRecord, 'user_id'>>;
  mfa: PortableFactor | null;
};

/** One page of the project's users in creation order (offset paging: run the export on a quiet project). */
export async function exportUsers(ctx: AuthContext, project: ProjectId, offset: number, limit: number): Promise<{ users: PortableUser[]; total: number }> {
  const { users, total } = await ctx.users.listUsers(project, { limit, offset });
  const out: PortableUser[] = [];
  for (const u of users) {
    const identities = (await ctx.users.listIdentities(project, u.id)).map(({ user_id: _owner, ...rest }) => rest);
    const factor = await ctx.users.factors.getFactor(project, u.id);
    let mfa: PortableFactor | null = null;
    // A pending factor (enrollment never confirmed) is not moved: the user enrols again.
    if (factor?.status === 'active') {
      const secret = ctx.factorSecrets.open(project, u.id, factor.secret_sealed);
      if (secret === null) throw new ConflictError(`The second factor of user ${u.id} cannot be opened with this deployment's key (PLINTH_MFA_KEY changed?).`, { user_id: u.id });
      mfa = { status: 'active', secret, created_at: factor.created_at, confirmed_at: factor.confirmed_at, last_step: factor.last_step, recovery_hashes: factor.recovery_hashes };
    }
    out.push({ ...u, identities, mfa });
  }
  return { users: out, total };
}

export interface ImportUsersResult {
  imported: number;
  /** Users whose id was already there: left as they are (a re-run of an import adds nothing). */
  existing: number;
}

/** Stores validated portable users; an e-mail or provider account taken by another user → 409 naming the index. */
export async function importUsers(ctx: AuthContext, project: ProjectId, users: PortableUser[]): Promise<ImportUsersResult> {
  const result: ImportUsersResult = { imported: 0, existing: 0 };
  for (const [index, u] of users.entries()) {
    if (await ctx.users.getUser(project, u.id)) {
      result.existing++;
      continue;
    }
    const { identities, mfa, ...record } = u;
    try {
      await ctx.users.createUser(project, record);
      for (const identity of identities) await ctx.users.linkIdentity(project, { ...identity, user_id: u.id });
    } catch (err) {
      if (err instanceof ConflictError) throw new ConflictError(`users[${index}]: ${err.message}`, { index, ...(err.details as { [k: string]: JsonValue } | undefined) });
      throw err;
    }
    if (mfa) {
      const sealed = ctx.factorSecrets.seal(project, u.id, mfa.secret);
      const pending = { user_id: u.id, secret_sealed: sealed, status: 'pending' as const, created_at: mfa.created_at, confirmed_at: null, last_step: -1, recovery_hashes: [] };
      const stored = (await ctx.users.factors.putPendingFactor(project, pending)) && (await ctx.users.factors.activateFactor(project, u.id, sealed, mfa.last_step, mfa.recovery_hashes, mfa.confirmed_at ?? mfa.created_at));
      if (!stored) throw new InvalidRequestError(`users[${index}]: the second factor could not be stored.`, { index });
    }
    result.imported++;
  }
  return result;
}
