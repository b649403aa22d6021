import type { ProjectId } from '../types';

/**
 * The read side of session revocation (docs/auth.md: "revocation is immediate … on every
 * service within 1 s"). The auth service writes revocations; any service that verifies a user
 * token (records: `X-Db-User-Token`) asks a RevocationChecker after checking the signature.
 */
export interface RevocationChecker {
  /**
   * True when the session `sid` of `project` was revoked at or after `iat` (seconds since the
   * epoch, the token's issued-at claim): the token must be refused. False for a live session.
   * A checker whose store can lose data (Redis) also answers true for a session it does not
   * know, so losing data fails closed; the in-process list, fed from the durable SQLite session
   * store, answers false for a sid never seen. Answers reflect a revocation as soon as the
   * writer has finished it. Rejects when the store cannot be asked (never "not revoked").
   */
  isRevoked(project: ProjectId, sid: string, iat: number): Promise<boolean>;
}

/**
 * How long a revocation marker is kept: the longest an access token can live (86 400 s) plus a
 * minute of clock skew. After that every token of the session has expired anyway.
 */
export const REVOCATION_RETENTION_SECONDS = 86_400 + 60;

/** The prefix the auth service's Redis session store uses unless configured otherwise. */
export const DEFAULT_AUTH_REDIS_PREFIX = 'plinth:auth:';
