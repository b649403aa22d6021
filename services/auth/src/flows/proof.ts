import { ForbiddenError, type ProjectId } from '@plinth/shared';
import { otpHash } from '../domain/secrets';
import type { UserRecord } from '../store/user-store';
import { hashTicket, type AuthContext, type Requester } from './auth-context';
import { CODE_WIDE_ATTEMPTS } from './sign-in';

/** What a signed-in user sends to prove it is still them: the current password, or a fresh sign-in code. */
export interface Proof {
  password?: string;
  code?: string;
}

const WRONG_PROOF = 'The current password or code is wrong.';

/**
 * 403 unless `proof` holds the user's current password or the live sign-in code of their e-mail
 * (requested with /otp/request; the code is spent). A user without a password can only prove it
 * with a code. Wrong codes are limited per client address by the routes (CodeFailures).
 */
export async function checkProof(ctx: AuthContext, project: ProjectId, user: UserRecord, proof: Proof, by: Requester): Promise<void> {
  if (proof.code !== undefined) {
    // An anonymous user has no address, hence no code.
    const ok = user.email !== null && (await ctx.users.redeemOtp(project, user.email, otpHash(user.email, proof.code), ctx.clock(), CODE_WIDE_ATTEMPTS));
    if (!ok) throw new ForbiddenError(WRONG_PROOF);
    return;
  }
  const ok = await ctx.passwords.verify(proof.password ?? '', user.password_hash, hashTicket(project, by));
  if (!ok) throw new ForbiddenError(WRONG_PROOF);
}
