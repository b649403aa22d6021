import * as oidc from 'openid-client';
import type { ProviderClient } from './provider-clients';

/** Who the provider says signed in, normalised across providers. */
export interface ProviderProfile {
  subject: string;
  /** Lower-cased; null when the provider gave no address. */
  email: string | null;
  /** Only true when the provider asserted it (`email_verified`, or GitHub's `verified`). */
  email_verified: boolean;
  name: string | null;
  picture: string | null;
}

const str = (v: unknown, max: number): string | null => (typeof v === 'string' && v.length > 0 && v.length <= max ? v : null);

/** Apple sends `email_verified` as the string "true". */
const asserted = (v: unknown): boolean => v === true || v === 'true';

/** The profile in a validated ID token (openid-client checked its signature, iss, aud, exp and nonce). */
export function profileFromIdToken(claims: oidc.IDToken): ProviderProfile {
  const email = str(claims.email, 254);
  return {
    subject: claims.sub,
    email: email?.toLowerCase() ?? null,
    email_verified: email !== null && asserted(claims.email_verified),
    name: str(claims.name, 200),
    picture: str(claims.picture, 2048),
  };
}

async function githubJson(client: ProviderClient, accessToken: string, path: string): Promise<unknown> {
  if (client.kind.kind !== 'github') throw new Error('not a GitHub provider');
  const url = new URL(`${client.kind.apiUrl.replace(/\/+$/, '')}${path}`);
  const headers = new Headers({ accept: 'application/vnd.github+json', 'user-agent': 'plinth-auth' });
  const res = await oidc.fetchProtectedResource(client.config, accessToken, url, 'GET', undefined, headers);
  if (res.status !== 200) throw new Error(`GitHub ${path} answered ${res.status}`);
  return res.json();
}

/**
 * GitHub's user (`GET /user`) and its primary address (`GET /user/emails`): verified only when
 * GitHub says so. GitHub is plain OAuth 2.0: there is no ID token.
 */
export async function githubProfile(client: ProviderClient, accessToken: string): Promise<ProviderProfile> {
  const user = (await githubJson(client, accessToken, '/user')) as { id?: unknown; name?: unknown; login?: unknown; avatar_url?: unknown };
  if (typeof user?.id !== 'number' && typeof user?.id !== 'string') throw new Error('GitHub /user has no id');
  const emails = await githubJson(client, accessToken, '/user/emails');
  const list = Array.isArray(emails) ? (emails.slice(0, 100) as Array<{ email?: unknown; primary?: unknown; verified?: unknown }>) : [];
  const primary = list.find((e) => e?.primary === true && str(e.email, 254));
  const email = primary ? str(primary.email, 254) : null;
  return {
    subject: String(user.id),
    email: email?.toLowerCase() ?? null,
    email_verified: email !== null && primary?.verified === true,
    name: str(user.name, 200) ?? str(user.login, 200),
    picture: str(user.avatar_url, 2048),
  };
}
