/**
 * The claims the realtime service needs from an access token, read without verifying it: the
 * records service verifies the token on every subscribe, so these only steer timers (expiry)
 * and revocation checks. A forged token cannot subscribe; at worst it is checked for nothing.
 */
export interface TokenClaims {
  sub: string | null;
  sid: string | null;
  iat: number;
  /** Seconds since the epoch; null when absent. */
  exp: number | null;
}

export function readClaims(token: string): TokenClaims | null {
  const part = token.split('.')[1];
  if (!part) return null;
  try {
    const c = JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as { [k: string]: unknown };
    return {
      sub: typeof c.sub === 'string' ? c.sub : null,
      sid: typeof c.sid === 'string' ? c.sid : null,
      iat: typeof c.iat === 'number' ? c.iat : 0,
      exp: typeof c.exp === 'number' ? c.exp : null,
    };
  } catch {
    return null;
  }
}
