import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { UnauthorizedError, UnavailableError, type JsonValue } from '@plinth/shared';
import type { AuthInfo } from '../domain/access-policy';

/** One public key as served at GET /v1/projects/{p}/auth/jwks.json. */
export interface Jwk {
  kty: string;
  kid?: string;
  alg?: string;
  use?: string;
  crv?: string;
  x?: string;
  y?: string;
}

export interface Jwks {
  keys: Jwk[];
}

export interface UserTokenVerifierOptions {
  /** Fetches the project's JWKS (the auth service's jwks.json). */
  jwks: () => Promise<Jwks>;
  /** The project the tokens must be issued for (`aud`). */
  project: string;
  /** Checked for tokens that carry a `sid`; true → 401. Default: no revocation check. */
  isRevoked?: (project: string, sid: string, iat: number) => Promise<boolean>;
  /** Least time between two JWKS fetches triggered by an unknown `kid`. Default 30 s. */
  minRefetchIntervalMs?: number;
  /** How long a fetched JWKS is used before the next verification refetches it. Default 10 min. */
  maxAgeMs?: number;
  /**
   * Stale-while-error: when a refetch fails (auth down), the last good keys keep verifying for up
   * to this long after they were fetched, with one refetch attempt per `minRefetchIntervalMs`.
   * Default 1 hour. Without any good keys (a replica started during the outage) → 503.
   */
  maxStaleMs?: number;
  /** Told once per failed refresh whether stale keys are served (records logs it). */
  onRefreshFailure?: (info: { project: string; servingStale: boolean; ageMs: number | null }) => void;
  /** Leeway for `exp`/`nbf`, in seconds. Default 0. */
  clockToleranceSeconds?: number;
  /** Clock in ms since the epoch (tests). Default Date.now. */
  now?: () => number;
}

export interface UserTokenVerifier {
  /**
   * Verifies an `X-Db-User-Token` value: an ES256 JWT with `aud` = the project, a known `kid`,
   * a `sub` and an unexpired `exp`.
   * @throws UnauthorizedError (401) for any token that is malformed, signed with another
   *   algorithm (`none`, HS256…), tampered with, expired, for another project, signed with an
   *   unknown key, or revoked.
   * @throws UnavailableError (503) when the JWKS cannot be fetched.
   */
  verify(token: string): Promise<AuthInfo>;
}

const HEADER = 'X-Db-User-Token';
const MAX_TOKEN_LENGTH = 8192;
/** Claims that describe the token itself; everything else is exposed as `auth.claims.*`. */
export const RESERVED_CLAIMS: ReadonlySet<string> = new Set([
  'iss', 'aud', 'sub', 'sid', 'iat', 'exp', 'nbf', 'jti', 'email', 'email_verified',
]);

function unauthorized(reason: string, message: string): UnauthorizedError {
  return new UnauthorizedError(message, { header: HEADER, reason });
}

export function createUserTokenVerifier(opts: UserTokenVerifierOptions): UserTokenVerifier {
  const now = opts.now ?? Date.now;
  const minRefetchIntervalMs = opts.minRefetchIntervalMs ?? 30_000;
  const maxAgeMs = opts.maxAgeMs ?? 600_000;
  const maxStaleMs = opts.maxStaleMs ?? 3_600_000;
  let keys: Map<string, KeyObject> | null = null;
  let fetchedAt = 0;
  let lastAttemptAt = Number.NEGATIVE_INFINITY;
  let inflight: Promise<void> | null = null;
  let lastRefreshFailed = false;

  /** Keys fetched long enough ago that a failed refresh must not fall back on them. */
  const tooStale = () => keys === null || now() - fetchedAt > maxStaleMs;

  function refresh(): Promise<void> {
    inflight ??= (async () => {
      lastAttemptAt = now();
      try {
        keys = importKeys(await opts.jwks());
        fetchedAt = now();
        lastRefreshFailed = false;
      } catch {
        lastRefreshFailed = true;
        const servingStale = !tooStale();
        opts.onRefreshFailure?.({ project: opts.project, servingStale, ageMs: keys === null ? null : now() - fetchedAt });
        if (!servingStale) throw new UnavailableError('The signing keys for user tokens cannot be fetched right now.');
      } finally {
        inflight = null;
      }
    })();
    return inflight;
  }

  async function keyFor(kid: string): Promise<KeyObject | undefined> {
    const expired = keys === null || now() - fetchedAt > maxAgeMs;
    // While auth is failing, stale keys are used between refetch attempts (one per interval).
    const waitingToRetry = !tooStale() && now() - lastAttemptAt < minRefetchIntervalMs;
    if (expired && !waitingToRetry) await refresh();
    const known = keys?.get(kid);
    if (known) return known;
    if (now() - lastAttemptAt >= minRefetchIntervalMs) await refresh();
    const found = keys?.get(kid);
    // A kid we cannot look up because auth is failing is not proof the token is forged.
    if (!found && lastRefreshFailed) throw new UnavailableError('The signing keys for user tokens cannot be fetched right now.');
    return found;
  }

  return {
    async verify(token: string): Promise<AuthInfo> {
      if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH) {
        throw unauthorized('malformed', 'The user token is malformed.');
      }
      const decoded = jwt.decode(token, { complete: true });
      if (decoded === null || typeof decoded.payload !== 'object') {
        throw unauthorized('malformed', 'The user token is malformed.');
      }
      if (decoded.header.alg !== 'ES256') throw unauthorized('algorithm', 'The user token must be signed with ES256.');
      const kid = decoded.header.kid;
      if (typeof kid !== 'string') throw unauthorized('unknown_key', 'The user token names no signing key.');
      const key = await keyFor(kid);
      if (!key) throw unauthorized('unknown_key', 'The user token was signed with an unknown key.');

      let payload: jwt.JwtPayload;
      try {
        payload = jwt.verify(token, key, {
          algorithms: ['ES256'],
          clockTolerance: opts.clockToleranceSeconds ?? 0,
          clockTimestamp: Math.floor(now() / 1000),
        }) as jwt.JwtPayload;
      } catch (err) {
        if (err instanceof jwt.TokenExpiredError) throw unauthorized('expired', 'The user token has expired.');
        throw unauthorized('invalid', 'The user token is invalid.');
      }
      return toAuthInfo(payload, opts);
    },
  };
}

async function toAuthInfo(payload: jwt.JwtPayload, opts: UserTokenVerifierOptions): Promise<AuthInfo> {
  const { sub, exp, aud, sid, iat } = payload;
  if (aud !== opts.project) throw unauthorized('audience', 'The user token is for another project.');
  if (typeof sub !== 'string' || sub.length === 0) throw unauthorized('invalid', 'The user token has no subject.');
  if (typeof exp !== 'number') throw unauthorized('invalid', 'The user token has no expiry.');
  if (typeof sid === 'string' && opts.isRevoked && (await opts.isRevoked(opts.project, sid, typeof iat === 'number' ? iat : 0))) {
    throw unauthorized('revoked', 'The user token has been revoked.');
  }
  // fromEntries defines own properties, so a `__proto__` claim stays a plain (inert) claim.
  const claims: { [name: string]: JsonValue } = Object.fromEntries(
    Object.entries(payload as { [name: string]: JsonValue }).filter(([name]) => !RESERVED_CLAIMS.has(name)),
  );
  return {
    uid: sub,
    email: typeof payload.email === 'string' ? payload.email : null,
    email_verified: payload.email_verified === true,
    claims,
    exp,
    ...(typeof sid === 'string' ? { sid, iat: typeof iat === 'number' ? iat : 0 } : {}),
  };
}

/** The usable keys of a JWKS by kid: EC P-256 signature keys (others are skipped). */
function importKeys(jwks: Jwks): Map<string, KeyObject> {
  const out = new Map<string, KeyObject>();
  for (const jwk of Array.isArray(jwks?.keys) ? jwks.keys : []) {
    if (typeof jwk.kid !== 'string' || jwk.kty !== 'EC' || jwk.crv !== 'P-256') continue;
    if ((jwk.alg !== undefined && jwk.alg !== 'ES256') || (jwk.use !== undefined && jwk.use !== 'sig')) continue;
    try {
      out.set(jwk.kid, createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' }));
    } catch {
      // A key that does not import cannot verify anything; the others still can.
    }
  }
  return out;
}

export interface ProjectTokenVerifiersOptions extends Omit<UserTokenVerifierOptions, 'jwks' | 'project'> {
  /** Fetches a project's JWKS. */
  jwks: (project: string) => Promise<Jwks>;
  /** Most projects whose verifier (and JWKS cache) is kept; the least recently used go first. Default 1000. */
  maxProjects?: number;
}

/** One verifier per project, created on first use — what a multi-tenant service holds. */
export interface ProjectTokenVerifiers {
  /** As UserTokenVerifier.verify, for a token that must belong to `project`. */
  verify(project: string, token: string): Promise<AuthInfo>;
  /** Drops the project's verifier and cached keys (the project was deleted): the next token refetches. */
  forget(project: string): void;
  /** Drops every verifier (announcements may have been missed). */
  forgetAll(): void;
}

export function createProjectTokenVerifiers(opts: ProjectTokenVerifiersOptions): ProjectTokenVerifiers {
  const { jwks, maxProjects = 1000, ...shared } = opts;
  const verifiers = new Map<string, UserTokenVerifier>();
  return {
    verify(project: string, token: string): Promise<AuthInfo> {
      let verifier = verifiers.get(project);
      if (verifier) {
        verifiers.delete(project);
      } else {
        verifier = createUserTokenVerifier({ ...shared, project, jwks: () => jwks(project) });
        if (verifiers.size >= maxProjects) verifiers.delete(verifiers.keys().next().value as string);
      }
      verifiers.set(project, verifier);
      return verifier.verify(token);
    },
    forget(project: string): void {
      verifiers.delete(project);
    },
    forgetAll(): void {
      verifiers.clear();
    },
  };
}
