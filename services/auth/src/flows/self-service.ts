import { ConflictError, ForbiddenError, type ProjectId, type Session, type User } from '@plinth/shared';
import { toPublicUser } from '../domain/public-user';
import { otpHash, sha256 } from '../domain/secrets';
import { invalidFields } from '../domain/validation';
import type { UserRecord } from '../store/user-store';
import { hashTicket, sendMail, type AuthContext, type Requester } from './auth-context';
import { startSession } from './sessions';
import { OTP_MAX_ATTEMPTS } from './sign-in';
import { afterPasswordChange, INVALID_LINK, mailSlot, sendLink, VERIFY_LINK_TTL_MS } from './verification';

/** What a signed-in user sends to prove it is still them: the current password, or a fresh sign-in code. */
export interface Proof {
  password?: string;
  code?: string;
}

const WRONG_PROOF = 'The current password or code is wrong.';

/**
 * 403 unless `proof` holds the user's current password or a live sign-in code of their e-mail
 * (requested with /otp/request; a wrong code spends one of its 5 attempts). A user without a
 * password can only prove it with a code.
 */
export async function checkProof(ctx: AuthContext, project: ProjectId, user: UserRecord, proof: Proof, by: Requester): Promise<void> {
  if (proof.code !== undefined) {
    const ok = await ctx.users.redeemOtp(project, user.email, otpHash(user.email, proof.code), ctx.clock(), OTP_MAX_ATTEMPTS);
    if (!ok) throw new ForbiddenError(WRONG_PROOF);
    return;
  }
  const ok = await ctx.passwords.verify(proof.password ?? '', user.password_hash, hashTicket(project, by));
  if (!ok) throw new ForbiddenError(WRONG_PROOF);
}

/**
 * Changes the password of a signed-in user who proves the current one. Every session ends
 * (this one too), older reset links and the live code die, and a new session is answered.
 */
export async function changePassword(
  ctx: AuthContext,
  project: ProjectId,
  user: UserRecord,
  input: { current_password: string; new_password: string },
  by: Requester,
): Promise<Session> {
  await checkProof(ctx, project, user, { password: input.current_password }, by);
  const updated = await ctx.users.updateUser(project, user.id, { password_hash: await ctx.passwords.hash(input.new_password, hashTicket(project, by)) });
  if (!updated) throw new ForbiddenError(WRONG_PROOF);
  await afterPasswordChange(ctx, project, updated);
  return startSession(ctx, project, updated);
}

/**
 * Starts a change of e-mail: a 24-hour confirmation link to the new address and a notice to the
 * old one. Nothing changes until the link is confirmed. A user with a password proves it.
 * The new address taken → 409. At most one change mail per user per 60 s (later requests
 * still answer sent, sending nothing); a new request replaces the pending one.
 */
export async function requestEmailChange(
  ctx: AuthContext,
  project: ProjectId,
  user: UserRecord,
  input: { new_email: string; password?: string },
  by: Requester,
): Promise<void> {
  if (user.password_hash !== null) await checkProof(ctx, project, user, { password: input.password ?? '' }, by);
  if (input.new_email === user.email) throw invalidFields([{ field: 'new_email', message: 'is already the e-mail of this account' }]);
  if (await ctx.users.getUserByEmail(project, input.new_email)) {
    throw new ConflictError('A user with this e-mail already exists.', { field: 'new_email', fields: [{ field: 'new_email', message: 'is taken' }] });
  }
  const now = ctx.clock();
  if (!(await mailSlot(ctx, project, 'email-change', user.id, now))) return;
  await ctx.users.deleteOneTimeTokens(project, user.id, ['email-change']);
  await sendLink(ctx, project, user, 'email-change', VERIFY_LINK_TTL_MS, { now, to: input.new_email });
  await sendMail(ctx, project, 'email-changed', user.email, { new_email: input.new_email });
}

/**
 * Confirms a change of e-mail from the link sent to the new address: the account takes the
 * new, verified address; reset and verification links sent to the old address stop working.
 * Bad token → 400; the address taken meanwhile → 409.
 */
export async function confirmEmailChange(ctx: AuthContext, project: ProjectId, token: string): Promise<User> {
  const taken = await ctx.users.takeOneTimeToken(project, 'email-change', sha256(token), ctx.clock());
  if (!taken?.email) throw invalidFields([{ field: 'token', message: INVALID_LINK }]);
  const before = await ctx.users.getUser(project, taken.user_id);
  const user = before ? await ctx.users.updateUser(project, taken.user_id, { email: taken.email, email_verified: true }) : null;
  if (!before || !user) throw invalidFields([{ field: 'token', message: INVALID_LINK }]);
  await ctx.users.deleteOneTimeTokens(project, user.id, ['reset', 'verify']);
  await ctx.users.deleteOtp(project, before.email);
  return toPublicUser(user);
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
  await ctx.sessions.revokeUser(project, user.id, ctx.clock());
  await ctx.users.deleteUser(project, user.id);
}
