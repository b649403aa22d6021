import { ConflictError, type ProjectId } from '@plinth/shared';
import { newUserRecord } from '../domain/new-user';
import type { ProviderProfile } from '../oauth/provider-profile';
import type { UserRecord } from '../store/user-store';
import type { AuthContext } from './auth-context';

/**
 * Why a provider sign-in did not give a user, as the app is told (`error` in the query of its
 * redirect target; docs/auth.md "Errors of a provider sign-in").
 */
export type AccountRefusal = 'account_exists' | 'account_disabled' | 'email_required';

export type AccountOutcome = { user: UserRecord } | { refused: AccountRefusal };

async function link(ctx: AuthContext, project: ProjectId, provider: string, profile: ProviderProfile, userId: string): Promise<boolean> {
  try {
    await ctx.users.linkIdentity(project, {
      provider,
      subject: profile.subject,
      user_id: userId,
      email: profile.email,
      email_verified: profile.email_verified,
      created_at: new Date(ctx.clock()).toISOString(),
    });
    return true;
  } catch (err) {
    if (!(err instanceof ConflictError)) throw err;
    // Linked meanwhile by a racing callback: fine when it is this user's.
    return (await ctx.users.getIdentity(project, provider, profile.subject))?.user_id === userId;
  }
}

const active = (user: UserRecord | null): AccountOutcome => (user && user.status === 'active' ? { user } : { refused: 'account_disabled' });

/**
 * The user a provider sign-in is for (docs/auth.md "Linking without takeover"):
 * - a provider account already linked → its user;
 * - explicit linking by a signed-in user (`linkUserId`) → linked to that user, unless the
 *   provider account belongs to another user or the user has an account of this provider;
 * - an address no user has → a new user (verified only if the provider asserted it);
 * - an address of an existing user → linked only when the provider asserts the address is
 *   verified AND the existing account's address is verified; otherwise `account_exists`
 *   (whoever controls the provider account may not own the address).
 */
export async function resolveAccount(
  ctx: AuthContext,
  project: ProjectId,
  provider: string,
  profile: ProviderProfile,
  linkUserId: string | null,
): Promise<AccountOutcome> {
  const linked = await ctx.users.getIdentity(project, provider, profile.subject);
  if (linkUserId) {
    const user = await ctx.users.getUser(project, linkUserId);
    if (!user || user.status !== 'active') return { refused: 'account_disabled' };
    if (linked) return linked.user_id === linkUserId ? { user } : { refused: 'account_exists' };
    return (await link(ctx, project, provider, profile, user.id)) ? { user } : { refused: 'account_exists' };
  }
  if (linked) return active(await ctx.users.getUser(project, linked.user_id));
  if (!profile.email) return { refused: 'email_required' };

  let existing = await ctx.users.getUserByEmail(project, profile.email);
  if (!existing) {
    const created = newUserRecord(
      profile.email,
      { email_verified: profile.email_verified, display_name: profile.name, photo_url: profile.picture },
      ctx.clock(),
    );
    try {
      await ctx.users.createUser(project, created);
      if (await link(ctx, project, provider, profile, created.id)) return { user: created };
      // Another callback linked this provider account to a user it created first: that one wins.
      await ctx.users.deleteUser(project, created.id);
      return resolveAccount(ctx, project, provider, profile, null);
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
      existing = await ctx.users.getUserByEmail(project, profile.email);
      if (!existing) throw err;
    }
  }
  if (existing.status !== 'active') return { refused: 'account_disabled' };
  if (!(profile.email_verified && existing.email_verified)) return { refused: 'account_exists' };
  return (await link(ctx, project, provider, profile, existing.id)) ? { user: existing } : { refused: 'account_exists' };
}
