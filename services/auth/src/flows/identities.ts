import { ConflictError, InvalidRequestError, NotFoundError, type ProjectId } from '@plinth/shared';
import type { IdentityRecord, UserRecord } from '../store/user-store';
import type { AuthContext } from './auth-context';
import { LINK_TTL_MS, putCode, randomCode } from './oauth-grants';
import { callbackUrl } from './oauth-sign-in';

/** An identity as the API shows it. */
export interface PublicIdentity {
  provider: string;
  subject: string;
  email: string | null;
  email_verified: boolean;
  created_at: string;
}

const toPublic = ({ user_id: _u, ...rest }: IdentityRecord): PublicIdentity => rest;

export async function listIdentities(ctx: AuthContext, project: ProjectId, userId: string): Promise<PublicIdentity[]> {
  return (await ctx.users.listIdentities(project, userId)).map(toPublic);
}

/**
 * Unlinks the user's identity of a provider, unless it is their last way to sign in (no password
 * and no other identity) → 409 `conflict`. Unknown → 404.
 */
export async function unlinkIdentity(ctx: AuthContext, project: ProjectId, user: UserRecord, provider: string): Promise<void> {
  const identities = await ctx.users.listIdentities(project, user.id);
  if (!identities.some((i) => i.provider === provider)) throw new NotFoundError(`No identity of "${provider}" is linked to this user.`);
  if (user.password_hash === null && identities.length < 2) {
    throw new ConflictError('This is the last way to sign in to this account: set a password or link another provider first.', { reason: 'last_sign_in_method' });
  }
  await ctx.users.unlinkIdentity(project, user.id, provider);
}

/**
 * Explicit linking: a single-use ticket (5 minutes) for the signed-in user, inside the start URL
 * the app opens in the browser. The provider account is then linked to this user whatever its
 * address (docs/auth.md "Linking an identity").
 */
export async function linkTicket(ctx: AuthContext, project: ProjectId, user: UserRecord, provider: string, redirectTo: string): Promise<{ url: string }> {
  if (user.is_anonymous) throw new InvalidRequestError('An anonymous user cannot link a provider; upgrade it first.');
  const settings = (await ctx.settings.get(project)).providers[provider];
  if (!settings?.enabled) throw new NotFoundError(`No enabled sign-in provider "${provider}" in this project.`);
  const ticket = randomCode();
  await putCode(ctx, project, 'oauth-link', ticket, user.id, LINK_TTL_MS, { provider });
  const start = new URL(callbackUrl(ctx, project).replace(/\/callback$/, `/${encodeURIComponent(provider)}/start`));
  start.searchParams.set('redirect_to', redirectTo);
  start.searchParams.set('link', ticket);
  return { url: start.href };
}
