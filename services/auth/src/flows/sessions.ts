import { newId, UnauthorizedError, type ProjectId, type Session } from '@plinth/shared';
import type { AuthSettings } from '../domain/auth-settings';
import { toPublicUser } from '../domain/public-user';
import { newRefreshToken, openGrace, sealGrace, sha256 } from '../domain/secrets';
import type { SessionAal, SessionInfo } from '../store/session-store';
import type { UserRecord } from '../store/user-store';
import type { AuthContext } from './auth-context';

/** Reusing the immediate parent of the active refresh token within this window is forgiven. */
export const REFRESH_GRACE_MS = 10_000;

const INVALID_REFRESH = 'The refresh token is invalid, expired or revoked.';

async function sessionBody(
  ctx: AuthContext,
  project: ProjectId,
  user: UserRecord,
  sid: string,
  refreshToken: string,
  settings: AuthSettings,
  aal: SessionAal,
): Promise<Session> {
  const signed = await ctx.tokens.sign(
    project,
    { sub: user.id, sid, email: user.email ?? undefined, email_verified: user.email_verified, anonymous: user.is_anonymous, aal, extra: user.claims },
    settings.access_token_ttl,
  );
  return {
    user: toPublicUser(user),
    access_token: signed.token,
    expires_at: new Date(signed.exp * 1000).toISOString(),
    expires_in: signed.exp - signed.iat,
    refresh_token: refreshToken,
  };
}

/**
 * Starts a new session for `user` and records the sign-in time. A sign-in reaches it only
 * through the two-factor gate (mfa-gate.ts); a session that replaces the caller's own (password
 * change, reauthentication) keeps the caller's `aal`.
 */
export async function startSession(ctx: AuthContext, project: ProjectId, user: UserRecord, aal: SessionAal = 1): Promise<Session> {
  const settings = await ctx.settings.get(project);
  const now = ctx.clock();
  const refreshToken = newRefreshToken();
  const sid = newId('ses_');
  await ctx.sessions.create(project, {
    id: sid,
    user_id: user.id,
    refresh_hash: sha256(refreshToken),
    now,
    expires_at: now + settings.refresh_token_ttl * 1000,
    aal,
  });
  // After the session exists: a sign-up whose session could not be made is still unfinished.
  const signedIn = (await ctx.users.updateUser(project, user.id, { last_sign_in_at: new Date(now).toISOString() })) ?? user;
  ctx.anonymous.maybeRun(now);
  return sessionBody(ctx, project, signedIn, sid, refreshToken, settings, aal);
}

/**
 * Rotates a refresh token (docs/auth.md). The active token → a new one. Its immediate parent
 * within 10 s → the currently active one. Any other reuse revokes the family; unknown,
 * expired or revoked tokens, and sessions of disabled or deleted users → 401.
 */
export async function refreshSession(ctx: AuthContext, project: ProjectId, presented: string): Promise<Session> {
  const settings = await ctx.settings.get(project);
  const now = ctx.clock();
  const next = newRefreshToken();
  const r = await ctx.sessions.rotate(project, {
    presented_hash: sha256(presented),
    next_hash: sha256(next),
    next_grace: sealGrace(next, presented),
    now,
    next_expires_at: now + settings.refresh_token_ttl * 1000,
    grace_ms: REFRESH_GRACE_MS,
  });
  if (r.outcome === 'invalid' || r.outcome === 'reused') throw new UnauthorizedError(INVALID_REFRESH);
  const token = r.outcome === 'rotated' ? next : openGrace(r.grace, presented);
  if (token === null) throw new UnauthorizedError(INVALID_REFRESH);
  const user = await ctx.users.getUser(project, r.session.user_id);
  if (!user || user.status !== 'active') {
    await ctx.sessions.revoke(project, r.session.id, now);
    throw new UnauthorizedError(INVALID_REFRESH);
  }
  await ctx.anonymous.noteActivity(project, user, now);
  return sessionBody(ctx, project, user, r.session.id, token, settings, r.session.aal);
}

/** Ends the session the refresh token belongs to. Unknown tokens end nothing (and are not an error). */
export async function signOut(ctx: AuthContext, project: ProjectId, refreshToken: string): Promise<void> {
  await ctx.sessions.revokeByRefreshHash(project, sha256(refreshToken), ctx.clock());
}

/** A signed-in caller: the user and the live session of their access token. */
export interface SignedIn {
  user: UserRecord;
  sid: string;
  session: SessionInfo;
}

/** The user behind an access token whose session is live, or 401. */
export async function userFromAccessToken(ctx: AuthContext, project: ProjectId, token: string | undefined): Promise<SignedIn> {
  if (!token) throw new UnauthorizedError('This endpoint needs the X-Auth-User-Token header.');
  const claims = await ctx.tokens.verify(project, token);
  const sid = claims?.sid;
  const session = claims && sid ? await ctx.sessions.getActive(project, sid, ctx.clock()) : null;
  const user = session && session.user_id === claims?.sub ? await ctx.users.getUser(project, session.user_id) : null;
  if (!user || user.status !== 'active' || !sid || !session) throw new UnauthorizedError('The user token is invalid, expired or revoked.');
  return { user, sid, session };
}
