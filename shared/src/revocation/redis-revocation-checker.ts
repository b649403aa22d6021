import type { Redis } from 'ioredis';
import type { ProjectId } from '../types';
import { DEFAULT_AUTH_REDIS_PREFIX, type RevocationChecker } from './revocation-checker';
import type { RedisRevocationSync } from './redis-revocation-sync';

/**
 * Key layout written by the auth service's Redis SessionStore (services/auth/src/store/
 * redis-session-store.ts). `<prefix>` defaults to `plinth:auth:`.
 *
 *   <prefix>revoked:<project>:<sid>   string: the revocation time, whole seconds since the epoch.
 *                                     Written when the session ends (sign-out, sign-out-all,
 *                                     refresh-token reuse, disable, delete, password reset).
 *                                     Expires after REVOCATION_RETENTION_SECONDS.
 *   <prefix>sess:<project>:<sid>      hash: the session family; readers use `expires_at` and
 *                                     `revoked_at` (epoch ms). Kept while any token of the
 *                                     session can still be valid.
 *
 * Under PLINTH_REVOCATION_SYNC_PREFIX (default `plinth:auth:revocations:`), redis-revocation-sync.ts:
 *   applied                           the latest revocation time (ms) written to this data set.
 *   synced                            the data set auth last replayed the durable log into.
 *
 * The auth side keeps other keys under the same prefix (`rt:`, `user:`). Renaming either key
 * strands sessions or revocations: change both sides.
 */
export function revocationKey(prefix: string, project: ProjectId, sid: string): string {
  return `${prefix}revoked:${project}:${sid}`;
}

export function sessionKey(prefix: string, project: ProjectId, sid: string): string {
  return `${prefix}sess:${project}:${sid}`;
}

/**
 * Reads revocations from Redis in one round trip per check, so a revocation is seen at once.
 * Fails closed: a token is accepted only while its session hash exists, is not revoked and has
 * not expired. If Redis loses data (restart without persistence, failover to a lagging replica,
 * eviction), the sessions it lost are refused rather than their revocations forgotten. A Redis
 * error rejects (the caller answers 503), it never means "not revoked".
 *
 * With `sync` (every service in a deployment), an answer counts only while that Redis data set
 * is confirmed to hold every durable revocation (RedisRevocationSync): after a failover to a
 * replica that missed a sign-out, the check answers 503 until auth has replayed the durable log
 * into it, never "not revoked". The confirmation is a flag read after the reply: no extra round trip.
 */
export class RedisRevocationChecker implements RevocationChecker {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string = DEFAULT_AUTH_REDIS_PREFIX,
    private readonly opts: { nowMs?: () => number; sync?: RedisRevocationSync } = {},
  ) {}

  async isRevoked(project: ProjectId, sid: string, iat: number): Promise<boolean> {
    await this.opts.sync?.confirm();
    const replies = await this.redis
      .pipeline()
      .get(revocationKey(this.prefix, project, sid))
      .hmget(sessionKey(this.prefix, project, sid), 'user_id', 'expires_at', 'revoked_at')
      .exec();
    if (!replies) throw new Error('Redis pipeline was not executed.');
    for (const [err] of replies) if (err) throw err;
    // Checked after the reply: a reply from a data set not (or no longer) confirmed is not trusted.
    this.opts.sync?.assertConfirmed();
    const marker = replies[0]![1] as string | null;
    const [userId, expiresAt, revokedAt] = replies[1]![1] as (string | null)[];
    if (marker !== null && iat <= Number(marker)) return true;
    if (!userId) return true; // The session is unknown: never issued here, or lost with Redis data.
    // Like the marker: tokens issued up to the revocation are refused (`revoked_at` is in ms).
    if (revokedAt !== null && revokedAt !== undefined && iat * 1000 <= Number(revokedAt)) return true;
    return Number(expiresAt) <= (this.opts.nowMs ?? Date.now)();
  }
}
