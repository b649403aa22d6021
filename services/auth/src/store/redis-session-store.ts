import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import {
  DEFAULT_AUTH_REDIS_PREFIX,
  REVOCATION_RETENTION_SECONDS,
  RedisRevocationChecker,
  type ProjectId,
} from '@plinth/shared';
import type { NewSession, Rotation, RotationOutcome, SessionInfo, SessionStore } from './session-store';
import { CREATE_SCRIPT, REVOKE_BY_HASH_SCRIPT, REVOKE_SCRIPT, REVOKE_USER_SCRIPT, ROTATE_SCRIPT } from './redis-scripts';

const RETENTION_MS = REVOCATION_RETENTION_SECONDS * 1000;

/**
 * SessionStore on Redis (cluster mode). Keys, under `prefix` (default `plinth:auth:`):
 *
 *   sess:<project>:<sid>        hash: the family (user_id, created_at, expires_at, current and
 *                               parent refresh-token hashes, grace blob, rotated_at, revoked_at)
 *   rt:<project>:<sha256>       string: sid, for every refresh token the family ever issued
 *   user:<project>:<user_id>    set: the user's sids
 *   revoked:<project>:<sid>     string: revocation time in seconds — read by other services
 *                               through @plinth/shared RedisRevocationChecker
 *
 * Family keys live until the family expires plus the revocation retention, so reuse of an old
 * token is still recognised (and still revokes) for that long. Every mutation is one Lua script.
 */
export class RedisSessionStore implements SessionStore {
  readonly revocations: RedisRevocationChecker;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string = DEFAULT_AUTH_REDIS_PREFIX,
  ) {
    this.revocations = new RedisRevocationChecker(redis, prefix);
  }

  private async run(script: string, args: Array<string | number>): Promise<unknown> {
    const sha = createHash('sha1').update(script).digest('hex');
    try {
      return await this.redis.evalsha(sha, 0, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.includes('NOSCRIPT')) throw err;
      return this.redis.eval(script, 0, ...args);
    }
  }

  async create(project: ProjectId, s: NewSession): Promise<void> {
    await this.run(CREATE_SCRIPT, [this.prefix, project, s.id, s.user_id, s.refresh_hash, s.now, s.expires_at, RETENTION_MS]);
  }

  async rotate(project: ProjectId, rot: Rotation): Promise<RotationOutcome> {
    const r = (await this.run(ROTATE_SCRIPT, [
      this.prefix,
      project,
      rot.presented_hash,
      rot.next_hash,
      rot.next_grace,
      rot.now,
      rot.next_expires_at,
      rot.grace_ms,
      RETENTION_MS,
      REVOCATION_RETENTION_SECONDS,
    ])) as string[];
    const [outcome, id, userId, createdAt, expiresAt, grace] = r;
    if (outcome === 'invalid' || !id || !userId) return { outcome: 'invalid' };
    const session: SessionInfo = { id, user_id: userId, created_at: Number(createdAt), expires_at: Number(expiresAt) };
    if (outcome === 'rotated') return { outcome, session };
    if (outcome === 'grace' && grace !== undefined) return { outcome, session, grace };
    return { outcome: 'reused', session };
  }

  async getActive(project: ProjectId, sid: string, now: number): Promise<SessionInfo | null> {
    const [userId, createdAt, expiresAt, revokedAt] = await this.redis.hmget(
      `${this.prefix}sess:${project}:${sid}`,
      'user_id',
      'created_at',
      'expires_at',
      'revoked_at',
    );
    if (!userId || revokedAt !== null || Number(expiresAt) <= now) return null;
    return { id: sid, user_id: userId, created_at: Number(createdAt), expires_at: Number(expiresAt) };
  }

  async revokeByRefreshHash(project: ProjectId, refreshHash: string, now: number): Promise<boolean> {
    const r = await this.run(REVOKE_BY_HASH_SCRIPT, [this.prefix, project, refreshHash, now, REVOCATION_RETENTION_SECONDS]);
    return r !== -1;
  }

  async revoke(project: ProjectId, sid: string, now: number): Promise<boolean> {
    return (await this.run(REVOKE_SCRIPT, [this.prefix, project, sid, now, REVOCATION_RETENTION_SECONDS])) === 1;
  }

  async revokeUser(project: ProjectId, userId: string, now: number): Promise<number> {
    return Number(await this.run(REVOKE_USER_SCRIPT, [this.prefix, project, userId, now, REVOCATION_RETENTION_SECONDS]));
  }

  async purgeProject(project: ProjectId, now: number): Promise<void> {
    // Project ids are [a-z0-9-]: no glob characters, and the `:` after the id ends the match.
    for await (const keys of this.redis.scanStream({ match: `${this.prefix}sess:${project}:*`, count: 500 })) {
      for (const key of keys as string[]) {
        const sid = key.slice(`${this.prefix}sess:${project}:`.length);
        await this.run(REVOKE_SCRIPT, [this.prefix, project, sid, now, REVOCATION_RETENTION_SECONDS]);
      }
      if ((keys as string[]).length > 0) await this.redis.unlink(...(keys as string[]));
    }
    for (const kind of ['rt', 'user']) {
      for await (const keys of this.redis.scanStream({ match: `${this.prefix}${kind}:${project}:*`, count: 500 })) {
        if ((keys as string[]).length > 0) await this.redis.unlink(...(keys as string[]));
      }
    }
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    // The connection belongs to the caller (shared with the rate limiter).
  }
}
