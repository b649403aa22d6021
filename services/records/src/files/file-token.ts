/**
 * Short-lived file tokens (docs/files.md "File tokens"): what an `<img src>` carries as
 * `?token=` in place of headers. A token names its project, the user and session it was
 * issued to (or none, for a key-only caller), and when it expires (minutes); it is an HMAC, so
 * it cannot be altered. A download with a token is judged by the record's read rule as that
 * user, and the session is checked as a user token's is (its `sid`, and the `iat` of the user
 * token it was asked with), so signing out, disabling or deleting the user ends its tokens too.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { JsonValue, ProjectId } from '@plinth/shared';

export const FILE_TOKEN_TTL_SECONDS = 5 * 60;
const PREFIX = 'ft1';

export interface FileTokenClaims {
  project: ProjectId;
  /** The user it was issued to; null for a caller without a user token. */
  uid: string | null;
  /** The user's session, checked for revocation at each use. */
  sid: string | null;
  /** When the user token it was asked with was issued (seconds): revocations are judged against it. */
  iat?: number;
  /** Unix seconds. */
  exp: number;
  /** What the read rule may read of the user besides `uid` (`auth.email`, `auth.claims.*`), as their token said. */
  user?: FileTokenUser;
}

export interface FileTokenUser {
  email: string | null;
  email_verified: boolean;
  claims: { [name: string]: JsonValue };
}

/** Longest token accepted (a user's claims travel in it). */
const MAX_TOKEN_LENGTH = 8192;

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64url');

function sign(secret: string, payload: string): string {
  return createHmac('sha256', secret).update(`plinth-file-token\n${payload}`).digest('base64url');
}

export function issueFileToken(secret: string, claims: Omit<FileTokenClaims, 'exp'>, nowSeconds = Math.floor(Date.now() / 1000), ttl = FILE_TOKEN_TTL_SECONDS): { token: string; expires_at: string } {
  const exp = nowSeconds + ttl;
  const user = claims.user ? { a: [claims.user.email, claims.user.email_verified, claims.user.claims] } : {};
  const payload = b64(JSON.stringify({ p: claims.project, u: claims.uid, s: claims.sid, ...(claims.iat !== undefined ? { i: claims.iat } : {}), e: exp, ...user }));
  return { token: `${PREFIX}.${payload}.${sign(secret, payload)}`, expires_at: new Date(exp * 1000).toISOString() };
}

/** The claims of a genuine, unexpired token for `project`; null otherwise. */
export function verifyFileToken(secret: string, token: string, project: ProjectId, nowSeconds = Math.floor(Date.now() / 1000)): FileTokenClaims | null {
  if (token.length > MAX_TOKEN_LENGTH) return null;
  const [prefix, payload, sig, extra] = token.split('.');
  if (prefix !== PREFIX || !payload || !sig || extra !== undefined) return null;
  const expected = Buffer.from(sign(secret, payload));
  const given = Buffer.from(sig);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
  let raw: { p?: unknown; u?: unknown; s?: unknown; i?: unknown; e?: unknown; a?: unknown };
  try {
    raw = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as typeof raw;
  } catch {
    return null;
  }
  if (raw.p !== project || typeof raw.e !== 'number' || raw.e <= nowSeconds) return null;
  const uid = typeof raw.u === 'string' ? raw.u : null;
  const sid = typeof raw.s === 'string' ? raw.s : null;
  const claims: FileTokenClaims = { project, uid, sid, exp: raw.e, ...(typeof raw.i === 'number' ? { iat: raw.i } : {}) };
  if (Array.isArray(raw.a) && raw.a.length === 3) {
    const [email, verified, custom] = raw.a as [unknown, unknown, unknown];
    claims.user = {
      email: typeof email === 'string' ? email : null,
      email_verified: verified === true,
      claims: custom !== null && typeof custom === 'object' && !Array.isArray(custom) ? (custom as { [name: string]: JsonValue }) : {},
    };
  }
  return claims;
}
