import { NotFoundError, type ProjectId, type User } from '@plinth/shared';
import { toPublicUser } from '../domain/public-user';
import { invalidFields } from '../domain/validation';
import { newLinkToken, sha256 } from '../domain/secrets';
import type { OneTimeTokenKind, UserRecord } from '../store/user-store';
import { sendMail, type AuthContext } from './auth-context';

export const VERIFY_LINK_TTL_MS = 24 * 3600_000;
export const RESET_LINK_TTL_MS = 3600_000;

const INVALID_LINK = 'The token is invalid, expired or already used.';

async function sendLink(
  ctx: AuthContext,
  project: ProjectId,
  user: UserRecord,
  kind: OneTimeTokenKind,
  ttlMs: number,
  jobId?: string,
): Promise<void> {
  const token = newLinkToken();
  await ctx.users.putOneTimeToken(project, { token_hash: sha256(token), kind, user_id: user.id, expires_at: ctx.clock() + ttlMs });
  await sendMail(ctx, project, kind, user.email, { token }, jobId);
}

/**
 * Mails a 24-hour verification link, unless the e-mail is already verified. `jobId` makes the
 * mail idempotent (sign-up passes one per user, so a retried sign-up mails once).
 */
export async function sendVerification(ctx: AuthContext, project: ProjectId, user: UserRecord, jobId?: string): Promise<void> {
  if (!user.email_verified) await sendLink(ctx, project, user, 'verify', VERIFY_LINK_TTL_MS, jobId);
}

/** Marks the e-mail of the token's user verified. Invalid, expired or used token → 400. */
export async function confirmVerification(ctx: AuthContext, project: ProjectId, token: string): Promise<User> {
  const userId = await ctx.users.consumeOneTimeToken(project, 'verify', sha256(token), ctx.clock());
  const user = userId ? await ctx.users.updateUser(project, userId, { email_verified: true }) : null;
  if (!user) throw invalidFields([{ field: 'token', message: INVALID_LINK }]);
  return toPublicUser(user);
}

/** Mails a 1-hour reset link when the e-mail belongs to an active user. The caller always answers `{sent:true}`. */
export async function forgotPassword(ctx: AuthContext, project: ProjectId, email: string): Promise<void> {
  const user = await ctx.users.getUserByEmail(project, email);
  if (user && user.status === 'active') await sendLink(ctx, project, user, 'reset', RESET_LINK_TTL_MS);
}

/** Admin `send-reset`: mails a reset link to a user by id. Unknown user → 404. */
export async function sendResetTo(ctx: AuthContext, project: ProjectId, userId: string): Promise<void> {
  const user = await ctx.users.getUser(project, userId);
  if (!user) throw new NotFoundError('No such user.');
  await sendLink(ctx, project, user, 'reset', RESET_LINK_TTL_MS);
}

/** Sets a new password from a reset token and ends every session of the user. Bad token → 400. */
export async function resetPassword(ctx: AuthContext, project: ProjectId, token: string, password: string): Promise<void> {
  const userId = await ctx.users.consumeOneTimeToken(project, 'reset', sha256(token), ctx.clock());
  const user = userId ? await ctx.users.updateUser(project, userId, { password_hash: await ctx.passwords.hash(password) }) : null;
  if (!user) throw invalidFields([{ field: 'token', message: INVALID_LINK }]);
  await ctx.sessions.revokeUser(project, user.id, ctx.clock());
}
