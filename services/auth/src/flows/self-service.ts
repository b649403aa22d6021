import { UnauthorizedError, type ProjectId, type Session, type User } from '@plinth/shared';
import { addressOf } from '../domain/anonymous-user';
import { toPublicUser } from '../domain/public-user';
import { invalidFields } from '../domain/validation';
import type { UserRecord } from '../store/user-store';
import { endEverySession } from './address-claims';
import { hashTicket, type AuthContext, type Requester } from './auth-context';
import { revokeMintedForUser } from './mint-token';
import { checkProof, type Proof } from './proof';
import { requireRecentProof } from './recent-proof';
import { startSession, type SignedIn } from './sessions';
import { afterPasswordChange } from './verification';

export type { Proof } from './proof';

/**
 * Changes the password of a signed-in user who proves the current one, or gives a password-less
 * user a first one (a new sign-in method: that needs a recent sign-in instead, docs/auth.md
 * "Recent proof"). Every session ends (this one too), older reset links, the pending e-mail
 * change and the live code die, and a new session is answered.
 */
export async function changePassword(
  ctx: AuthContext,
  project: ProjectId,
  caller: SignedIn,
  input: { current_password?: string; new_password: string },
  by: Requester,
): Promise<Session> {
  const { user } = caller;
  addressOf(user); // an anonymous user adds a password with its address: POST /auth/anonymous/upgrade
  if (user.password_hash === null && input.current_password === undefined) await requireRecentProof(ctx, project, caller);
  else if (input.current_password === undefined) throw invalidFields([{ field: 'current_password', message: 'is required' }]);
  else await checkProof(ctx, project, user, { password: input.current_password }, by);
  const updated = await ctx.users.updateUser(project, user.id, { password_hash: await ctx.passwords.hash(input.new_password, hashTicket(project, by)) });
  if (!updated) throw new UnauthorizedError('The user token is invalid, expired or revoked.');
  await afterPasswordChange(ctx, project, updated);
  return startSession(ctx, project, updated, caller.session.aal);
}

/** Changes the signed-in user's own profile fields. */
export async function updateProfile(
  ctx: AuthContext,
  project: ProjectId,
  user: UserRecord,
  patch: { display_name?: string | null; photo_url?: string | null },
): Promise<User> {
  const updated = await ctx.users.updateUser(project, user.id, patch);
  return toPublicUser(updated ?? user);
}

/**
 * Deletes the signed-in user's own account after a proof (current password or a fresh code):
 * every session ends and the identity goes, freeing the e-mail. Records the user created stay:
 * they belong to the app, which decides (docs/auth.md "Deleting an account").
 */
export async function deleteOwnAccount(ctx: AuthContext, project: ProjectId, user: UserRecord, proof: Proof, by: Requester): Promise<void> {
  await checkProof(ctx, project, user, proof, by);
  await endEverySession(ctx, project, user.id);
  await revokeMintedForUser(ctx, project, user.id);
  await ctx.users.deleteUser(project, user.id);
}
