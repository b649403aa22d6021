import { ConflictError, UnauthorizedError, type ProjectId, type Session } from '@plinth/shared';
import { newOtpCode, otpHash } from '../domain/secrets';
import { newUserRecord } from '../domain/new-user';
import { giveToAddressOwner } from './address-claims';
import { hashTicket, sendMail, type AuthContext, type Requester } from './auth-context';
import { completeSignIn } from './mfa-gate';
import { sendVerification } from './verification';
import type { UserRecord } from '../store/user-store';

export const OTP_TTL_MS = 10 * 60_000;
/**
 * Wrong codes one client address may try for one e-mail per rate window (CodeFailures in the
 * routes). Wrong codes do not spend the code itself: a count on the code would let anyone who
 * knows the address kill its owner's code (docs/auth.md "Limits").
 */
export const OTP_MAX_ATTEMPTS = 5;
/** What the store's per-code attempt count is given: no limit (see OTP_MAX_ATTEMPTS). */
export const CODE_WIDE_ATTEMPTS = Number.MAX_SAFE_INTEGER;
export const OTP_RESEND_INTERVAL_MS = 60_000;

/** One message for every sign-in failure, so the answer never tells which part was wrong. */
const BAD_CREDENTIALS = 'Invalid e-mail or password.';
const BAD_CODE = 'Invalid or expired code.';

/**
 * Sign-up: a new user with a password and a session. Taken e-mail → 409 (from the store).
 *
 * All-or-nothing from the client's view: if a step after the user row fails (Redis down or
 * hung while enqueueing the mail or making the session), the client got an error and the
 * account is unfinished — never signed in. A retry with the same e-mail and password then
 * finishes it (mail, session, 201) instead of answering 409; the verification mail has a job id
 * of its own per user, so it is sent once however often sign-up is retried.
 */
export async function signUp(
  ctx: AuthContext,
  project: ProjectId,
  input: { email: string; password: string; display_name?: string },
  by: Requester,
): Promise<Session> {
  const settings = await ctx.settings.get(project);
  let user = newUserRecord(
    input.email,
    { password_hash: await ctx.passwords.hash(input.password, hashTicket(project, by)), display_name: input.display_name ?? null },
    ctx.clock(),
  );
  try {
    await ctx.users.createUser(project, user);
  } catch (err) {
    const unfinished = err instanceof ConflictError ? await unfinishedSignUp(ctx, project, input, by) : null;
    if (!unfinished) throw err;
    user = unfinished;
  }
  if (settings.send_verification_on_signup) await sendVerification(ctx, project, user, ctx.clock(), `mail_signup-${user.id}`);
  return completeSignIn(ctx, project, user);
}

/** The user of an earlier sign-up with this e-mail and password that never got its session. */
async function unfinishedSignUp(
  ctx: AuthContext,
  project: ProjectId,
  input: { email: string; password: string },
  by: Requester,
): Promise<UserRecord | null> {
  const existing = await ctx.users.getUserByEmail(project, input.email);
  if (!existing || existing.status !== 'active' || existing.last_sign_in_at !== null || !existing.password_hash) return null;
  return (await ctx.passwords.verify(input.password, existing.password_hash, hashTicket(project, by))) ? existing : null;
}

/**
 * Sign-in with a password. Wrong password, unknown e-mail, no password, disabled → the same 401.
 * No hashing thread free in time → 503 `overloaded` (before the comparison, whatever the e-mail).
 */
export async function signIn(ctx: AuthContext, project: ProjectId, input: { email: string; password: string }, by: Requester): Promise<Session> {
  const user = await ctx.users.getUserByEmail(project, input.email);
  const ok = await ctx.passwords.verify(input.password, user?.password_hash ?? null, hashTicket(project, by));
  if (!ok || !user || user.status !== 'active') throw new UnauthorizedError(BAD_CREDENTIALS);
  return completeSignIn(ctx, project, user);
}

/**
 * Sends a 6-digit code when the e-mail belongs to an active user (or may create one), at most
 * once per minute per e-mail. The route has already answered `{sent:true}` (it runs this as
 * BackgroundWork, with the time of the request), so known and unknown e-mails take equal time.
 */
export async function requestOtp(ctx: AuthContext, project: ProjectId, email: string, now = ctx.clock()): Promise<void> {
  const user = await ctx.users.getUserByEmail(project, email);
  if (user ? user.status !== 'active' : !(await ctx.settings.get(project)).otp_creates_users) return;
  const code = newOtpCode();
  const issued = await ctx.users.issueOtp(project, {
    email,
    code_hash: otpHash(email, code),
    now,
    expires_at: now + OTP_TTL_MS,
    resend_after: now - OTP_RESEND_INTERVAL_MS,
  });
  if (issued) await sendMail(ctx, project, 'otp', email, { code });
}

/**
 * Redeems a code: marks the e-mail verified (creating a password-less user if allowed) and
 * starts a session. On an unverified account this first clears its password and sessions.
 */
export async function redeemOtp(ctx: AuthContext, project: ProjectId, input: { email: string; code: string }): Promise<Session> {
  const now = ctx.clock();
  if (!(await ctx.users.redeemOtp(project, input.email, otpHash(input.email, input.code), now, CODE_WIDE_ATTEMPTS))) {
    throw new UnauthorizedError(BAD_CODE);
  }
  let user = await ctx.users.getUserByEmail(project, input.email);
  if (!user && (await ctx.settings.get(project)).otp_creates_users) {
    const created = newUserRecord(input.email, { email_verified: true }, now);
    await ctx.users.createUser(project, created);
    user = created;
  }
  if (!user || user.status !== 'active') throw new UnauthorizedError(BAD_CODE);
  // The code proved the address of an account that was not verified: whoever signed up with it
  // before may not be its owner (pre-hijacking), so the owner gets it (docs/auth.md "Proving an address").
  if (!user.email_verified) user = await giveToAddressOwner(ctx, project, user);
  return completeSignIn(ctx, project, user);
}
