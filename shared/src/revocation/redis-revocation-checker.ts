import type { Redis } from 'ioredis';
import type { ProjectId } from '../types';
import { DEFAULT_AUTH_REDIS_PREFIX, type RevocationChecker } from './revocation-checker';

/**
 * Key layout written by the auth service's Redis SessionStore (services/auth/src/store/
 * redis-session-store.ts). `<prefix>` defaults to `plinth:auth:`.
 *
 *   <prefix>revoked:<project>:<sid>   string: the revocation time, whole seconds since the epoch.
 *                                     Written when the session ends (sign-out, sign-out-all,
 *                                     refresh-token reuse, disable, delete, password reset).
 *                                     Expires after REVOCATION_RETENTION_SECONDS.
 *
 * The auth side keeps its own session keys under the same prefix (`sess:`, `rt:`, `user:`);
 * readers only need the `revoked:` key. Renaming it strands revocations: change both sides.
 */
export function revocationKey(prefix: string, project: ProjectId, sid: string): string {
  return `${prefix}revoked:${project}:${sid}`;
}

/** Reads revocation markers from Redis: one GET per check, so a revocation is seen at once. */
export class RedisRevocationChecker implements RevocationChecker {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string = DEFAULT_AUTH_REDIS_PREFIX,
  ) {}

  async isRevoked(project: ProjectId, sid: string, iat: number): Promise<boolean> {
    const at = await this.redis.get(revocationKey(this.prefix, project, sid));
    return at !== null && iat <= Number(at);
  }
}
