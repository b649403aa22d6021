import { ReauthenticationRequiredError, type ProjectId, type Session } from '@plinth/shared';
import type { AuthContext, Requester } from './auth-context';
import { checkProof, type Proof } from './proof';
import { startSession, type SignedIn } from './sessions';

export type { SignedIn } from './sessions';

/**
 * 403 `reauthentication_required` unless the caller's session was signed in (password or code)
 * within the project's `reauthentication_window`. Sensitive changes that carry no password or
 * code of their own call this, so a leaked access token alone cannot make them
 * (docs/auth.md "Recent proof"). Refreshing a session does not renew its sign-in; reauthenticate does.
 */
export async function requireRecentProof(ctx: AuthContext, project: ProjectId, caller: SignedIn): Promise<void> {
  const { reauthentication_window: windowSeconds } = await ctx.settings.get(project);
  const age = ctx.clock() - caller.session.created_at;
  if (age > windowSeconds * 1000) {
    throw new ReauthenticationRequiredError(undefined, { reauthentication_window: windowSeconds });
  }
}

/**
 * Proves the signed-in user again (current password, or a fresh sign-in code): the session is
 * replaced by a new one signed in now, which counts as recent proof for the window. Wrong proof → 403.
 */
export async function reauthenticate(ctx: AuthContext, project: ProjectId, caller: SignedIn, proof: Proof, by: Requester): Promise<Session> {
  await checkProof(ctx, project, caller.user, proof, by);
  await ctx.sessions.revoke(project, caller.sid, ctx.clock());
  return startSession(ctx, project, caller.user, caller.session.aal);
}
