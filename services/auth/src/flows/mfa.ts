import { ConflictError, ForbiddenError, InvalidRequestError, NotFoundError, UnauthorizedError, type ProjectId, type Session } from '@plinth/shared';
import { addressOf } from '../domain/anonymous-user';
import { challengeHash, newRecoveryCodes, newTotpSecret, recoveryCodeHash, totpStep, totpUri } from '../domain/totp';
import type { TotpFactor } from '../store/factor-store';
import type { AuthContext } from './auth-context';
import { MFA_CHALLENGE_ATTEMPTS } from './mfa-gate';
import { requireRecentProof } from './recent-proof';
import { startSession, type SignedIn } from './sessions';

/** A factor as answers show it: never its secret or recovery codes. */
export interface PublicFactor {
  type: 'totp';
  status: 'pending' | 'active';
  created_at: string;
  confirmed_at: string | null;
  /** Unused recovery codes left (0 while pending). */
  recovery_codes_left: number;
}

/** A second factor as presented: a TOTP code or one recovery code. */
export interface SecondFactor {
  code?: string;
  recovery_code?: string;
}

/**
 * Wraps the checking of a presented code with the failure budget of wrong codes of one user
 * (CodeFailures in the routes: per client address and user; a wrong code throws 401 or 403).
 */
export type CodeBudget = <T>(userId: string, attempt: () => Promise<T>) => Promise<T>;

const BAD_CODE = 'Invalid or already used code.';
const BAD_CHALLENGE = 'The challenge is invalid, expired or used up: sign in again.';

export function publicFactor(f: TotpFactor): PublicFactor {
  return {
    type: 'totp',
    status: f.status,
    created_at: new Date(f.created_at).toISOString(),
    confirmed_at: f.confirmed_at === null ? null : new Date(f.confirmed_at).toISOString(),
    recovery_codes_left: f.recovery_hashes.length,
  };
}

/** The user's factors (at most one TOTP factor), for the user and for the admin API. */
export async function listFactors(ctx: AuthContext, project: ProjectId, userId: string): Promise<{ factors: PublicFactor[] }> {
  const f = await ctx.users.factors.getFactor(project, userId);
  return { factors: f ? [publicFactor(f)] : [] };
}

/**
 * True when `code` is a TOTP code of the factor's secret for now (one step either way) whose
 * time step is later than any accepted before: the step is then spent, so a code works once.
 */
async function spendTotpCode(ctx: AuthContext, project: ProjectId, factor: TotpFactor, code: string): Promise<boolean> {
  const secret = ctx.factorSecrets.open(project, factor.user_id, factor.secret_sealed);
  const step = secret === null ? null : totpStep(secret, code, ctx.clock());
  return step !== null && (await ctx.users.factors.useStep(project, factor.user_id, step));
}

/** Spends the presented second factor of the user's active factor; false when it is wrong, used or there is none. */
async function spendSecondFactor(ctx: AuthContext, project: ProjectId, userId: string, given: SecondFactor): Promise<boolean> {
  const factor = await ctx.users.factors.getFactor(project, userId);
  if (factor?.status !== 'active') return false;
  if (given.code !== undefined) return spendTotpCode(ctx, project, factor, given.code);
  if (given.recovery_code !== undefined) return ctx.users.factors.useRecoveryCode(project, userId, recoveryCodeHash(userId, given.recovery_code));
  return false;
}

/**
 * `POST /auth/mfa/totp/enroll`: a new TOTP secret for the signed-in user, pending until a first
 * code confirms it. Adding a factor is a sensitive change (it could lock the owner out), so it
 * needs recent proof. The secret is shown here only: it is stored encrypted and never answered again.
 */
export async function enrollTotp(ctx: AuthContext, project: ProjectId, caller: SignedIn): Promise<{ factor: PublicFactor; secret: string; uri: string }> {
  const label = addressOf(caller.user); // anonymous users have no sign-in method to add a second factor to
  await requireRecentProof(ctx, project, caller);
  const secret = newTotpSecret();
  const factor: TotpFactor = {
    user_id: caller.user.id,
    secret_sealed: ctx.factorSecrets.seal(project, caller.user.id, secret),
    status: 'pending',
    created_at: ctx.clock(),
    confirmed_at: null,
    last_step: -1,
    recovery_hashes: [],
  };
  if (!(await ctx.users.factors.putPendingFactor(project, factor))) {
    throw new ConflictError('Two-factor sign-in is already on for this user: turn it off first (DELETE /auth/mfa/totp).');
  }
  return { factor: publicFactor(factor), secret, uri: totpUri(secret, project, label) };
}

/**
 * `POST /auth/mfa/totp/confirm {code}`: the first code turns the pending factor on. Answers the
 * ten recovery codes (shown only here; stored as hashes) and a new session at `aal` 2 in place
 * of the one that asked. A wrong code → 403 (counted as a wrong code of the user).
 */
export async function confirmTotp(
  ctx: AuthContext,
  project: ProjectId,
  caller: SignedIn,
  code: string,
): Promise<{ factor: PublicFactor; recovery_codes: string[]; session: Session }> {
  const userId = caller.user.id;
  const factor = await ctx.users.factors.getFactor(project, userId);
  if (factor?.status !== 'pending') throw new InvalidRequestError('There is no enrollment to confirm: start one with POST /auth/mfa/totp/enroll.');
  const secret = ctx.factorSecrets.open(project, userId, factor.secret_sealed);
  const step = secret === null ? null : totpStep(secret, code, ctx.clock());
  if (step === null) throw new ForbiddenError(BAD_CODE);
  const codes = newRecoveryCodes();
  const now = ctx.clock();
  if (!(await ctx.users.factors.activateFactor(project, userId, factor.secret_sealed, step, codes.map((c) => recoveryCodeHash(userId, c)), now))) {
    throw new ConflictError('The enrollment changed meanwhile: start again.');
  }
  await ctx.sessions.revoke(project, caller.sid, now);
  const session = await startSession(ctx, project, caller.user, 2);
  const active = await ctx.users.factors.getFactor(project, userId);
  return { factor: publicFactor(active ?? factor), recovery_codes: codes, session };
}

/**
 * `POST /auth/mfa/verify {challenge, code | recovery_code}`: the second step of a sign-in that
 * answered `mfa_required`. The right code spends the challenge and answers a session at `aal` 2.
 * A wrong code → 401 (counted per client address and user by `budget`); a challenge that is
 * unknown, expired, spent or past its MFA_CHALLENGE_ATTEMPTS codes → 401.
 */
export async function verifyChallenge(
  ctx: AuthContext,
  project: ProjectId,
  input: SecondFactor & { challenge: string },
  budget: CodeBudget,
): Promise<Session> {
  const hash = challengeHash(input.challenge);
  const userId = await ctx.users.factors.attemptChallenge(project, hash, ctx.clock(), MFA_CHALLENGE_ATTEMPTS);
  if (userId === null) throw new UnauthorizedError(BAD_CHALLENGE);
  return budget(userId, async () => {
    if (!(await spendSecondFactor(ctx, project, userId, input))) throw new UnauthorizedError(BAD_CODE);
    const user = await ctx.users.getUser(project, userId);
    if ((await ctx.users.factors.takeChallenge(project, hash, ctx.clock())) === null || !user || user.status !== 'active') {
      throw new UnauthorizedError(BAD_CHALLENGE);
    }
    return startSession(ctx, project, user, 2);
  });
}

/**
 * `DELETE /auth/mfa/totp {code | recovery_code}`: turns two-factor sign-in off. An active factor
 * needs a current code (or a recovery code): a stolen access token alone cannot remove it. A
 * pending enrollment is dropped without one. Wrong code → 403; no factor → 404.
 */
export async function unenrollTotp(ctx: AuthContext, project: ProjectId, caller: SignedIn, given: SecondFactor): Promise<void> {
  const userId = caller.user.id;
  const factor = await ctx.users.factors.getFactor(project, userId);
  if (!factor) throw new NotFoundError('This user has no second factor.');
  if (factor.status === 'active') {
    if (given.code === undefined && given.recovery_code === undefined) {
      throw new InvalidRequestError('Turning two-factor sign-in off needs a current code.', { field: 'code', fields: [{ field: 'code', message: 'is required' }] });
    }
    if (!(await spendSecondFactor(ctx, project, userId, given))) throw new ForbiddenError(BAD_CODE);
  }
  await ctx.users.factors.deleteFactor(project, userId);
}

/** Admin `DELETE /auth/users/{id}/mfa`: removes the user's factors (a lost device); unknown user → 404. */
export async function resetFactors(ctx: AuthContext, project: ProjectId, userId: string): Promise<void> {
  if (!(await ctx.users.getUser(project, userId))) throw new NotFoundError('No such user.');
  await ctx.users.factors.deleteFactor(project, userId);
}
