import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { PlinthError, type ProjectId } from '@plinth/shared';
import type { OneTimeTokenKind } from '../store/user-store';
import type { AuthContext } from './auth-context';

/** How long a started sign-in may take at the provider. */
export const STATE_TTL_MS = 10 * 60_000;
/** How long the app has to trade the code it was sent back with for a session. */
export const EXCHANGE_TTL_MS = 60_000;
/** How long a link ticket (POST /oauth/{provider}/link) may wait before the browser opens it. */
export const LINK_TTL_MS = 5 * 60_000;

/** What a sign-in keeps between its start and the provider's callback. */
export interface StateData {
  provider: string;
  /** PKCE code verifier and OpenID Connect nonce; never leave the service. */
  verifier: string;
  nonce: string | null;
  redirect_to: string;
  /** sha256 of the browser binding (the cookie set at the start). */
  binding_hash: string;
}

export const sha256 = (s: string): string => createHash('sha256').update(s).digest('base64url');

/** A random code: 256 bits, URL-safe. */
export const randomCode = (): string => randomBytes(32).toString('base64url');

/** The cookie that binds a sign-in to the browser that started it (one per sign-in, so several may run at once). */
export function bindingCookieName(state: string): string {
  return `plinth_oauth_${sha256(state).slice(0, 16).replace(/[-_]/g, 'x')}`;
}

export function bindingMatches(binding: string | undefined, hash: string): boolean {
  if (!binding || binding.length > 200) return false;
  const a = Buffer.from(sha256(binding));
  const b = Buffer.from(hash);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function invalidGrant(message: string): PlinthError {
  return new PlinthError('invalid_grant', message);
}

/** Stores a single-use code (hashed) in the user store, shared by every replica. */
export async function putCode(ctx: AuthContext, project: ProjectId, kind: OneTimeTokenKind, code: string, userId: string, ttlMs: number, data?: object): Promise<void> {
  await ctx.users.putOneTimeToken(project, {
    token_hash: sha256(code),
    kind,
    user_id: userId,
    expires_at: ctx.clock() + ttlMs,
    ...(data ? { data: JSON.stringify(data) } : {}),
  });
}

/** Spends a single-use code: its user id and data, or null when unknown, expired or used. */
export async function takeCode(ctx: AuthContext, project: ProjectId, kind: OneTimeTokenKind, code: string): Promise<{ user_id: string; data: unknown } | null> {
  if (code.length < 20 || code.length > 200) return null;
  const token = await ctx.users.takeOneTimeToken(project, kind, sha256(code), ctx.clock());
  return token ? { user_id: token.user_id, data: token.data ? (JSON.parse(token.data) as unknown) : null } : null;
}
