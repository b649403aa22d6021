import { ConflictError, ForbiddenError, InvalidRequestError, UnauthorizedError, type ProjectId, type Session } from '@plinth/shared';
import { newUserRecord } from '../domain/new-user';
import { endEverySession } from './address-claims';
import { newRefreshToken, sha256, sealGrace } from '../domain/secrets';
import { hashTicket, type AuthContext, type Requester } from './auth-context';
import { requireRecentProof } from './recent-proof';
import { completeSignIn } from './mfa-gate';
import type { SignedIn } from './sessions';
import { sendVerification } from './verification';

/**
 * `POST /auth/anonymous`: a new user with no address and no password, and its session, when the
 * project's Auth setting `allow_anonymous` is on (403 `forbidden` otherwise). The routes limit it
 * per client address.
 */
export async function signInAnonymously(ctx: AuthContext, project: ProjectId): Promise<Session> {
  if (!(await ctx.settings.get(project)).allow_anonymous) {
    throw new ForbiddenError('Anonymous sign-in is off for this project: turn on the Auth setting allow_anonymous.');
  }
  const user = newUserRecord(null, { is_anonymous: true }, ctx.clock());
  await ctx.users.createUser(project, user);
  return completeSignIn(ctx, project, user);
}

/**
 * The anonymous account's proof of holding the session, for the upgrade (which adds a sign-in
 * method) once its sign-in is older than the project's `reauthentication_window`: the session's
 * refresh token (an anonymous account has no password or address to prove it with). The token
 * is spent: every session ends with the upgrade anyway. Another session's token, or one already
 * rotated → 403.
 */
async function spendRefreshToken(ctx: AuthContext, project: ProjectId, caller: SignedIn, refreshToken: string): Promise<void> {
  const now = ctx.clock();
  const spent = newRefreshToken();
  const r = await ctx.sessions.rotate(project, {
    presented_hash: sha256(refreshToken),
    next_hash: sha256(spent),
    next_grace: sealGrace(spent, refreshToken),
    now,
    next_expires_at: now + 1,
    grace_ms: 0,
  });
  if (r.outcome !== 'rotated' || r.session.id !== caller.sid) throw new ForbiddenError('The refresh token is not the live one of this session.');
}

/**
 * `POST /auth/anonymous/upgrade`: an anonymous user adds an address and a password, keeping its
 * id (and so every record it owns). Not anonymous → 400; the address taken → 409; no proof →
 * 403 (proveAnonymousSession). Every session ends (the anonymous access tokens stop working);
 * the answer is a new session whose token no longer says `anonymous`. A verification mail
 * follows when the project sends one on sign-up.
 */
export async function upgradeAnonymous(
  ctx: AuthContext,
  project: ProjectId,
  caller: SignedIn,
  input: { email: string; password: string; refresh_token?: string },
  by: Requester,
): Promise<Session> {
  const { user } = caller;
  if (!user.is_anonymous) {
    throw new InvalidRequestError('This user is not anonymous: change its password or e-mail with /auth/password/change or /auth/email/change.');
  }
  if (await ctx.users.getUserByEmail(project, input.email)) {
    throw new ConflictError('A user with this e-mail already exists.', { field: 'email', fields: [{ field: 'email', message: 'is taken' }] });
  }
  // Checked before the hash, spent after it: a refusal of the hashing pool (503) leaves the refresh token usable.
  if (input.refresh_token === undefined) await requireRecentProof(ctx, project, caller);
  const passwordHash = await ctx.passwords.hash(input.password, hashTicket(project, by));
  if (input.refresh_token !== undefined) await spendRefreshToken(ctx, project, caller, input.refresh_token);
  const upgraded = await ctx.users.updateUser(project, user.id, { email: input.email, email_verified: false, password_hash: passwordHash, is_anonymous: false });
  if (!upgraded) throw new UnauthorizedError('The user token is invalid, expired or revoked.');
  await ctx.sessions.revokeUser(project, user.id, ctx.clock());
  const settings = await ctx.settings.get(project);
  if (settings.send_verification_on_signup) await sendVerification(ctx, project, upgraded);
  return completeSignIn(ctx, project, upgraded);
}

/**
 * `DELETE /auth/user` of an anonymous user, which has no password or code to prove itself with:
 * the same proof as the upgrade (a sign-in within the window, or the session's refresh token).
 * Every session ends and the user goes; its records stay, as for any account (docs/auth.md).
 */
export async function deleteAnonymousAccount(ctx: AuthContext, project: ProjectId, caller: SignedIn, refreshToken: string | undefined): Promise<void> {
  if (refreshToken === undefined) await requireRecentProof(ctx, project, caller);
  else await spendRefreshToken(ctx, project, caller, refreshToken);
  await endEverySession(ctx, project, caller.user.id);
  await ctx.users.deleteUser(project, caller.user.id);
}
