import { NotFoundError, type LinkMailKind, type ProjectId, type User } from '@plinth/shared';
import { addressOf } from '../domain/anonymous-user';
import { toPublicUser } from '../domain/public-user';
import { invalidFields } from '../domain/validation';
import { newLinkToken, sha256 } from '../domain/secrets';
import { mailSlotKey, type OneTimeTokenKind, type UserRecord } from '../store/user-store';
import { giveToAddressOwner, holdsAccount, PENDING_EMAIL_CHANGE, type HolderProof } from './address-claims';
import { hashTicket, sendMail, type AuthContext, type Requester } from './auth-context';

export const VERIFY_LINK_TTL_MS = 24 * 3600_000;
export const RESET_LINK_TTL_MS = 3600_000;
/** Client endpoints send at most one mail of a kind per user per this interval (docs/auth.md "Mail throttle"). */
export const MAIL_INTERVAL_MS = 60_000;

export const INVALID_LINK = 'The token is invalid, expired or already used.';

/** True (and the slot taken) when no mail of this kind went to this user in the last 60 s. */
export function mailSlot(ctx: AuthContext, project: ProjectId, kind: OneTimeTokenKind, userId: string, now: number): Promise<boolean> {
  return ctx.users.claimMailSlot(project, mailSlotKey(kind, userId), now, MAIL_INTERVAL_MS);
}

/**
 * Stores a fresh one-time token of `kind` for the user and mails the link to `to` (default: the
 * user's address). `jobId` makes the mail idempotent (default: a fresh job id); `sid` binds the
 * token to the session that asked for it.
 */
export async function sendLink(
  ctx: AuthContext,
  project: ProjectId,
  user: UserRecord,
  kind: LinkMailKind,
  ttlMs: number,
  opts: { now?: number; to?: string; jobId?: string; sid?: string } = {},
): Promise<void> {
  const token = newLinkToken();
  const now = opts.now ?? ctx.clock();
  const email = kind === 'email-change' ? opts.to : undefined;
  await ctx.users.putOneTimeToken(project, { token_hash: sha256(token), kind, user_id: user.id, expires_at: now + ttlMs, email, sid: opts.sid });
  await sendMail(ctx, project, kind, opts.to ?? addressOf(user), { token }, opts.jobId);
}

/**
 * Mails a 24-hour verification link, unless the e-mail is already verified or a verification
 * mail went to this user in the last 60 s (then nothing is sent; the caller still says sent).
 * With a `jobId` (sign-up passes one per user) the mail is idempotent by that id instead: a
 * retried sign-up whose first mail never got queued still sends it, and never twice.
 */
export async function sendVerification(
  ctx: AuthContext,
  project: ProjectId,
  user: UserRecord,
  now = ctx.clock(),
  jobId?: string,
): Promise<void> {
  if (user.email_verified) return;
  const slot = await mailSlot(ctx, project, 'verify', user.id, now);
  if (!slot && jobId === undefined) return;
  await sendLink(ctx, project, user, 'verify', VERIFY_LINK_TTL_MS, { now, jobId });
}

/** What confirming a link did: the user after it, and whether the account went to the address's owner. */
export interface AddressConfirmed {
  user: User;
  /** True when the password set before was cleared and every earlier session ended. */
  took_over: boolean;
}

/**
 * Confirms the address of the token's user (docs/auth.md "Proving an address"). With a proof
 * that the confirmer also holds the account (its password or a live session), the address is
 * marked verified and nothing else changes; without one, the account goes to the address's
 * owner: the password set before is cleared and every earlier session ends. An address that is
 * already verified is refused (400), as are invalid, expired or used tokens; a proof that fails
 * → 403 and the link stays usable.
 */
export async function confirmVerification(
  ctx: AuthContext,
  project: ProjectId,
  token: string,
  proof: HolderProof,
  by: Requester,
): Promise<AddressConfirmed> {
  const taken = await ctx.users.takeOneTimeToken(project, 'verify', sha256(token), ctx.clock());
  const user = taken ? await ctx.users.getUser(project, taken.user_id) : null;
  if (!taken || !user) throw invalidFields([{ field: 'token', message: INVALID_LINK }]);
  if (user.email_verified) throw invalidFields([{ field: 'token', message: 'belongs to an address that is already verified' }]);
  if (await holdsAccount(ctx, project, user, proof, taken, by)) {
    const verified = (await ctx.users.updateUser(project, user.id, { email_verified: true })) ?? user;
    await ctx.users.deleteOneTimeTokens(project, user.id, ['verify']);
    return { user: toPublicUser(verified), took_over: false };
  }
  return { user: toPublicUser(await giveToAddressOwner(ctx, project, user)), took_over: true };
}

/**
 * Mails a 1-hour reset link when the e-mail belongs to an active user, at most once per user
 * per 60 s. Runs after the route has answered `{sent:true}` (BackgroundWork), with the time of
 * the request.
 */
export async function forgotPassword(ctx: AuthContext, project: ProjectId, email: string, now = ctx.clock()): Promise<void> {
  const user = await ctx.users.getUserByEmail(project, email);
  if (!user || user.status !== 'active') return;
  if (!(await mailSlot(ctx, project, 'reset', user.id, now))) return;
  await sendLink(ctx, project, user, 'reset', RESET_LINK_TTL_MS, { now });
}

/** Admin `send-reset`: mails a reset link to a user by id (not throttled: the secret key is trusted). Unknown user → 404. */
export async function sendResetTo(ctx: AuthContext, project: ProjectId, userId: string): Promise<void> {
  const user = await ctx.users.getUser(project, userId);
  if (!user) throw new NotFoundError('No such user.');
  await sendLink(ctx, project, user, 'reset', RESET_LINK_TTL_MS);
}

/**
 * After any change of a user's password (reset, change): every outstanding reset link, the
 * pending e-mail change and the e-mail's live sign-in code stop working, and every session ends.
 */
export async function afterPasswordChange(ctx: AuthContext, project: ProjectId, user: UserRecord): Promise<void> {
  await ctx.users.deleteOneTimeTokens(project, user.id, ['reset', ...PENDING_EMAIL_CHANGE]);
  if (user.email !== null) await ctx.users.deleteOtp(project, user.email);
  await ctx.sessions.revokeUser(project, user.id, ctx.clock());
}

/** Sets a new password from a reset token; older reset links, the live code and every session end. Bad token → 400. */
export async function resetPassword(ctx: AuthContext, project: ProjectId, token: string, password: string, by: Requester): Promise<void> {
  const userId = await ctx.users.consumeOneTimeToken(project, 'reset', sha256(token), ctx.clock());
  const before = userId ? await ctx.users.getUser(project, userId) : null;
  // The link reached the mailbox, so it also proves the address.
  const patch = userId ? { password_hash: await ctx.passwords.hash(password, hashTicket(project, by)), email_verified: true } : null;
  const user = userId && patch ? await ctx.users.updateUser(project, userId, patch) : null;
  if (!user) throw invalidFields([{ field: 'token', message: INVALID_LINK }]);
  // An unverified account's second factor was set up by whoever signed up, who need not be the
  // address's owner (pre-hijacking): it goes. A verified account keeps it: a mailbox alone does not pass it.
  if (before && !before.email_verified) await ctx.users.factors.deleteFactor(project, user.id);
  await afterPasswordChange(ctx, project, user);
}
