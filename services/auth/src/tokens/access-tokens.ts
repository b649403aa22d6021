import jwt from 'jsonwebtoken';
import type { JsonValue, ProjectId } from '@plinth/shared';
import { epochSeconds, type Clock } from '../clock';
import type { SigningKeys } from './signing-keys';

/** Claims Plinth sets itself; minted tokens may not use these names for custom claims. */
export const RESERVED_CLAIMS: ReadonlySet<string> = new Set([
  'iss', 'sub', 'aud', 'exp', 'nbf', 'iat', 'jti', 'sid', 'email', 'email_verified', 'anonymous', 'aal', 'kid', 'typ', 'alg',
]);

/** What a verified access token says. Custom claims of minted tokens sit beside the standard ones. */
export interface AccessClaims {
  iss: string;
  aud: string;
  sub: string;
  iat: number;
  exp: number;
  sid?: string;
  email?: string;
  email_verified?: boolean;
  /** Only on tokens of anonymous users (`true`); rules read it as `auth.token.anonymous`. */
  anonymous?: true;
  /** Auth sessions' assurance level: 1, or 2 after a second factor; rules read `auth.token.aal`. Absent on minted tokens. */
  aal?: 1 | 2;
  [claim: string]: JsonValue | undefined;
}

export interface TokenSubject {
  sub: string;
  sid?: string;
  email?: string;
  email_verified?: boolean;
  /** An anonymous user: the token says `anonymous: true` (absent otherwise). */
  anonymous?: boolean;
  /** The session's assurance level (Auth sessions only). */
  aal?: 1 | 2;
  /** Custom claims (minting only); names must not be reserved. */
  extra?: { [claim: string]: JsonValue };
}

export interface SignedToken {
  token: string;
  iat: number;
  exp: number;
}

/** Signs and verifies ES256 access tokens (JWT) with the project's keys. */
export class AccessTokens {
  constructor(
    private readonly keys: SigningKeys,
    private readonly issuer: string,
    private readonly clock: Clock,
  ) {}

  async sign(project: ProjectId, subject: TokenSubject, ttlSeconds: number): Promise<SignedToken> {
    const signer = await this.keys.signer(project);
    const iat = epochSeconds(this.clock);
    const exp = iat + ttlSeconds;
    const payload: { [claim: string]: JsonValue | undefined } = {
      ...subject.extra,
      iss: this.issuer,
      aud: project,
      sub: subject.sub,
      sid: subject.sid,
      iat,
      exp,
      email: subject.email,
      email_verified: subject.email_verified,
      // Set only here: `anonymous` is reserved, so no custom claim can say it.
      anonymous: subject.anonymous === true ? true : undefined,
      // Reserved too: only the session decides it (docs/auth.md "Two-factor sign-in").
      aal: subject.aal,
    };
    for (const k of Object.keys(payload)) if (payload[k] === undefined) delete payload[k];
    const token = jwt.sign(payload, signer.key, { algorithm: 'ES256', keyid: signer.kid });
    return { token, iat, exp };
  }

  /** The claims of a valid, unexpired token of this project signed by a current key; null otherwise. */
  async verify(project: ProjectId, token: string): Promise<AccessClaims | null> {
    const decoded = jwt.decode(token, { complete: true });
    const kid = decoded?.header.kid;
    if (!decoded || decoded.header.alg !== 'ES256' || typeof kid !== 'string') return null;
    const key = await this.keys.verificationKey(project, kid);
    if (!key) return null;
    try {
      const claims = jwt.verify(token, key, {
        algorithms: ['ES256'],
        audience: project,
        issuer: this.issuer,
        clockTimestamp: epochSeconds(this.clock),
      });
      return typeof claims === 'object' && typeof claims.sub === 'string' ? (claims as AccessClaims) : null;
    } catch {
      return null;
    }
  }
}
