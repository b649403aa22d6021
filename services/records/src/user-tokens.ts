import type { Request } from 'express';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import {
  INTERNAL_HEADERS,
  InternalClient,
  DEFAULT_AUTH_REDIS_PREFIX,
  RedisRevocationChecker,
  RedisRevocationSync,
  UnavailableError,
  UnauthorizedError,
  type Announcements,
  asProjectId,
  type ProjectId,
  type RevocationChecker,
} from '@plinth/shared';
import { createProjectTokenVerifiers, type Jwks } from './rules/user-token';
import { USER_TOKEN_HEADER, authFromUserToken } from './rules/access-context';
import type { AuthenticateUser } from './routes/records-routes';

/** Where the records service gets what it needs to verify `X-Db-User-Token`. */
export interface UserTokenSources {
  /** A project's public signing keys (the auth service's jwks.json). */
  jwks: (project: ProjectId) => Promise<Jwks>;
  /** Sessions revoked by sign-out, disable, delete or reset; checked on every request. */
  revocations?: RevocationChecker;
}

/**
 * Cluster mode: JWKS from the auth service over a signed internal call (AUTH_URL), revocations
 * from the Redis keys the auth service writes (REDIS_URL), read only while that Redis is
 * confirmed to hold every durable revocation (RedisRevocationSync; 503 meanwhile). Without AUTH_URL, a request carrying a
 * user token answers 503: the service cannot verify it.
 */
export function userTokenSourcesFromConfig(opts: {
  authUrl?: string;
  internalSecret: string;
  redis?: Redis | null;
  /** PLINTH_REVOCATION_SYNC_PREFIX. */
  syncPrefix?: string;
  logger?: Logger;
}): UserTokenSources {
  const client = opts.authUrl ? new InternalClient({ baseUrl: opts.authUrl, internalSecret: opts.internalSecret }) : null;
  return {
    jwks: async (project) => {
      if (!client) throw new UnavailableError('User tokens cannot be verified: the records service has no AUTH_URL.');
      return client.getJson<Jwks>(project, 'none', `/v1/projects/${project}/auth/jwks.json`);
    },
    // Trusted only while that Redis is known to hold every durable revocation (after a failover, once auth replayed them).
    revocations: opts.redis
      ? new RedisRevocationChecker(opts.redis, DEFAULT_AUTH_REDIS_PREFIX, {
          sync: new RedisRevocationSync(opts.redis, opts.syncPrefix, { logger: opts.logger }),
        })
      : undefined,
  };
}

/**
 * Turns a request's `X-Db-User-Token` into the verified user (null without the header);
 * `forget(project)` drops the project's cached signing keys, as does a project deletion or key
 * rotation heard on `announcements` (every key on `missed`).
 */
export function userTokenAuthenticator(
  sources: UserTokenSources,
  logger?: Logger,
  announcements?: Announcements,
): AuthenticateUser & { forget: (project: ProjectId) => void } {
  const revocations = sources.revocations;
  const verifiers = createProjectTokenVerifiers({
    jwks: (project) => sources.jwks(asProjectId(project)),
    onRefreshFailure: ({ project, servingStale, ageMs }) =>
      logger?.warn(
        { project, serving_stale_keys: servingStale, keys_age_ms: ageMs },
        servingStale ? 'JWKS refresh failed; verifying user tokens with the last good keys' : 'JWKS refresh failed; no usable keys',
      ),
    isRevoked: revocations ? (project, sid, iat) => revocations.isRevoked(asProjectId(project), sid, iat) : undefined,
  });
  /** Moves whenever an announcement dropped cached keys. */
  let dropped = 0;
  announcements?.subscribe((event) => {
    dropped++;
    if (event.kind === 'missed') verifiers.forgetAll();
    else verifiers.forget(event.project);
  });
  const authenticate: AuthenticateUser = async (req: Request) => {
    const input = {
      // The project header was verified by the chassis' internal-auth middleware.
      project: String(req.headers[INTERNAL_HEADERS.project]),
      userToken: req.headers[USER_TOKEN_HEADER],
      verifiers,
    };
    try {
      return await authFromUserToken(input);
    } catch (err) {
      // A key this process does not know may be a project's re-created elsewhere a moment ago:
      // hear the announcements not yet polled, and verify once more if they dropped cached keys
      // (only then: the hot path of known keys pays nothing).
      if (!announcements || !(err instanceof UnauthorizedError) || err.details?.reason !== 'unknown_key') throw err;
      const before = dropped;
      announcements.catchUp();
      if (dropped === before) throw err;
      return authFromUserToken(input);
    }
  };
  return Object.assign(authenticate, { forget: (project: ProjectId) => verifiers.forget(project) });
}
