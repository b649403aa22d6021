import { MfaRequiredError, type ProjectId, type Session } from '@plinth/shared';
import { challengeHash, newChallenge } from '../domain/totp';
import type { UserRecord } from '../store/user-store';
import type { AuthContext } from './auth-context';
import { startSession } from './sessions';

/** How long a sign-in challenge waits for its second factor. */
export const MFA_CHALLENGE_TTL_MS = 5 * 60_000;
/**
 * Codes one challenge takes at most, from any addresses; past it the client signs in again.
 * Above the wrong-code budget of one (client address, user) pair (OTP_MAX_ATTEMPTS), so one
 * address meets its 429 first.
 */
export const MFA_CHALLENGE_ATTEMPTS = 10;

/** The second factors a challenge can be answered with (`details.factors` of `mfa_required`). */
export const CHALLENGE_FACTORS = ['totp', 'recovery_code'] as const;

/**
 * The one way a sign-in gets its session: every sign-in path (password, e-mail code, anonymous
 * sign-in and upgrade, sign-up, and any later one such as an OAuth exchange) calls this once
 * the user has proved the first factor. A user without an active second factor gets a session
 * at `aal` 1. A user with one gets no session and no token: 401 `mfa_required` carrying a
 * single-use challenge (`mfc_…`, 5 minutes), which POST /auth/mfa/verify exchanges, with a code,
 * for a session at `aal` 2 (docs/auth.md "Two-factor sign-in"). The challenge is an opaque
 * random value stored as a hash: no service accepts it as a credential.
 */
export async function completeSignIn(ctx: AuthContext, project: ProjectId, user: UserRecord): Promise<Session> {
  const factor = await ctx.users.factors.getFactor(project, user.id);
  if (factor?.status !== 'active') return startSession(ctx, project, user, 1);
  const challenge = newChallenge();
  const expiresAt = ctx.clock() + MFA_CHALLENGE_TTL_MS;
  await ctx.users.factors.putChallenge(project, { hash: challengeHash(challenge), user_id: user.id, expires_at: expiresAt });
  throw new MfaRequiredError({
    challenge,
    expires_at: new Date(expiresAt).toISOString(),
    expires_in: MFA_CHALLENGE_TTL_MS / 1000,
    factors: [...CHALLENGE_FACTORS],
  });
}
