import { ConflictError, type ProjectId } from '@plinth/shared';
import { addressOf } from '../domain/anonymous-user';
import { toPublicUser } from '../domain/public-user';
import { newLinkToken, sha256 } from '../domain/secrets';
import { invalidFields } from '../domain/validation';
import type { UserRecord } from '../store/user-store';
import { cancelPendingEmailChange, giveToAddressOwner, holdsAccount, PENDING_EMAIL_CHANGE, type HolderProof } from './address-claims';
import { sendMail, type AuthContext, type Requester } from './auth-context';
import { requireRecentProof, type SignedIn } from './recent-proof';
import { checkProof } from './proof';
import { INVALID_LINK, mailSlot, sendLink, VERIFY_LINK_TTL_MS, type AddressConfirmed } from './verification';

/**
 * Starts a change of e-mail: a 24-hour confirmation link to the new address and a notice to the
 * old one whose link cancels the change. Nothing changes until the link is confirmed. A user
 * with a password proves it; one without needs a recent sign-in (docs/auth.md "Recent proof").
 * The new address taken → 409. At most one change mail per user per 60 s (later requests still
 * answer sent, sending nothing); a new request replaces the pending one.
 */
export async function requestEmailChange(
  ctx: AuthContext,
  project: ProjectId,
  caller: SignedIn,
  input: { new_email: string; password?: string },
  by: Requester,
): Promise<void> {
  const { user } = caller;
  const current = addressOf(user);
  if (user.password_hash !== null) await checkProof(ctx, project, user, { password: input.password ?? '' }, by);
  else await requireRecentProof(ctx, project, caller);
  if (input.new_email === current) throw invalidFields([{ field: 'new_email', message: 'is already the e-mail of this account' }]);
  if (await ctx.users.getUserByEmail(project, input.new_email)) {
    throw new ConflictError('A user with this e-mail already exists.', { field: 'new_email', fields: [{ field: 'new_email', message: 'is taken' }] });
  }
  const now = ctx.clock();
  if (!(await mailSlot(ctx, project, 'email-change', user.id, now))) return;
  await cancelPendingEmailChange(ctx, project, user.id);
  await sendLink(ctx, project, user, 'email-change', VERIFY_LINK_TTL_MS, { now, to: input.new_email, sid: caller.sid });
  const cancel = newLinkToken();
  await ctx.users.putOneTimeToken(project, {
    token_hash: sha256(cancel),
    kind: 'email-change-cancel',
    user_id: user.id,
    expires_at: now + VERIFY_LINK_TTL_MS,
  });
  await sendMail(ctx, project, 'email-changed', current, { new_email: input.new_email, token: cancel });
}

/**
 * Confirms a change of e-mail from the link sent to the new address: the account takes the new,
 * verified address; links sent to the old address stop working. The new address was proven by
 * whoever opened the link (docs/auth.md "Proving an address"): unless the confirmation also
 * proves the account (its password or a live session), the password set before is cleared and
 * every earlier session ends. Bad token, or the session that asked for the change has ended
 * since → 400; the address taken meanwhile → 409; a proof that fails → 403 and the link stays usable.
 */
export async function confirmEmailChange(
  ctx: AuthContext,
  project: ProjectId,
  token: string,
  proof: HolderProof,
  by: Requester,
): Promise<AddressConfirmed> {
  const now = ctx.clock();
  const taken = await ctx.users.takeOneTimeToken(project, 'email-change', sha256(token), now);
  const before = taken?.email ? await ctx.users.getUser(project, taken.user_id) : null;
  // The change ends with the session that asked for it (signed out, revoked, expired).
  const asker = taken?.sid ? await ctx.sessions.getActive(project, taken.sid, now) : null;
  if (!taken?.email || !before || (taken.sid !== undefined && !asker)) throw invalidFields([{ field: 'token', message: INVALID_LINK }]);
  const patch = { email: taken.email, email_verified: true };
  let user: UserRecord | null;
  let tookOver = false;
  if (await holdsAccount(ctx, project, before, proof, taken, by)) {
    user = await ctx.users.updateUser(project, before.id, patch);
    await ctx.users.deleteOneTimeTokens(project, before.id, ['reset', 'verify', ...PENDING_EMAIL_CHANGE]);
  } else {
    user = await giveToAddressOwner(ctx, project, before, patch);
    tookOver = true;
  }
  if (!user) throw invalidFields([{ field: 'token', message: INVALID_LINK }]);
  if (before.email !== null) await ctx.users.deleteOtp(project, before.email);
  return { user: toPublicUser(user), took_over: tookOver };
}

/**
 * Cancels a pending change of e-mail from the link in the notice to the old address: the
 * confirmation link stops working and, since someone who was signed in asked for the change,
 * every session ends. Bad token → 400.
 */
export async function cancelEmailChange(ctx: AuthContext, project: ProjectId, token: string): Promise<void> {
  const userId = await ctx.users.consumeOneTimeToken(project, 'email-change-cancel', sha256(token), ctx.clock());
  if (!userId) throw invalidFields([{ field: 'token', message: INVALID_LINK }]);
  await cancelPendingEmailChange(ctx, project, userId);
  await ctx.sessions.revokeUser(project, userId, ctx.clock());
}
