import { ForbiddenError, type ProjectId } from '@plinth/shared';
import type { OneTimeToken, OneTimeTokenKind, UserPatch, UserRecord } from '../store/user-store';
import { hashTicket, type AuthContext, type Requester } from './auth-context';
import { userFromAccessToken } from './sessions';

/** The one-time tokens of a pending e-mail change: the link to the new address and the cancel link to the old one. */
export const PENDING_EMAIL_CHANGE: readonly OneTimeTokenKind[] = ['email-change', 'email-change-cancel'];

/** Every link that acts on the account: what an owner taking the account back must kill. */
const EVERY_LINK: readonly OneTimeTokenKind[] = ['reset', 'verify', ...PENDING_EMAIL_CHANGE];

/** Cancels the user's pending e-mail change, if any: its confirmation link and its cancel link stop working. */
export async function cancelPendingEmailChange(ctx: AuthContext, project: ProjectId, userId: string): Promise<void> {
  await ctx.users.deleteOneTimeTokens(project, userId, PENDING_EMAIL_CHANGE);
}

/**
 * Ends every session of the user and the e-mail change any of them asked for (sign-out-all,
 * admin revoke-sessions, disabling): what a session authorised ends with it.
 */
export async function endEverySession(ctx: AuthContext, project: ProjectId, userId: string): Promise<void> {
  await cancelPendingEmailChange(ctx, project, userId);
  await ctx.sessions.revokeUser(project, userId, ctx.clock());
}

/**
 * An address of the account was just proven — by a sign-in code, a verification link or an
 * e-mail-change link — by someone who need not be whoever set the password or holds the
 * sessions (docs/auth.md "Proving an address"). The address's owner gets the account: `patch`
 * is applied with the address verified and the password cleared, every pending link dies and
 * every session that existed before ends. The owner sets a password through reset.
 * ConflictError when `patch.email` is taken meanwhile (nothing changed then).
 */
export async function giveToAddressOwner(ctx: AuthContext, project: ProjectId, user: UserRecord, patch: UserPatch = {}): Promise<UserRecord> {
  const claimed = (await ctx.users.updateUser(project, user.id, { ...patch, email_verified: true, password_hash: null })) ?? user;
  await ctx.users.deleteOneTimeTokens(project, user.id, EVERY_LINK);
  // A second factor set up before belongs to whoever held the account then, not to the address's owner.
  await ctx.users.factors.deleteFactor(project, user.id);
  await ctx.sessions.revokeUser(project, user.id, ctx.clock());
  return claimed;
}

/**
 * What the confirmer of a link may add to show they also hold the account: its current
 * password, or the access token of one of its live sessions.
 */
export interface HolderProof {
  password?: string;
  accessToken?: string;
}

const NOT_THE_HOLDER = 'The password or session does not belong to this account.';

/**
 * True when `proof` shows the confirmer holds `user` (its password, or a live session of it);
 * false when no proof was given. A proof that fails → 403 (401 for an invalid access token),
 * after `restore` has put the link back so the confirmer can try again.
 */
export async function holdsAccount(
  ctx: AuthContext,
  project: ProjectId,
  user: UserRecord,
  proof: HolderProof,
  taken: OneTimeToken,
  by: Requester,
): Promise<boolean> {
  if (proof.password === undefined && proof.accessToken === undefined) return false;
  try {
    if (proof.accessToken !== undefined) {
      const { user: holder } = await userFromAccessToken(ctx, project, proof.accessToken);
      if (holder.id !== user.id) throw new ForbiddenError(NOT_THE_HOLDER);
    }
    if (proof.password !== undefined && !(await ctx.passwords.verify(proof.password, user.password_hash, hashTicket(project, by)))) {
      throw new ForbiddenError(NOT_THE_HOLDER);
    }
    return true;
  } catch (err) {
    await ctx.users.putOneTimeToken(project, taken);
    throw err;
  }
}
