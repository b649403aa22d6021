import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import {
  DEFAULT_AUTH_REDIS_PREFIX,
  DEFAULT_REVOCATION_SYNC_PREFIX,
  REVOCATION_RETENTION_SECONDS,
  RedisRevocationChecker,
  RedisRevocationSync,
  appliedKey,
  type ProjectId,
} from '@plinth/shared';
import type { RevocationLog, RevokedSession } from './revocation-log';
import type { NewSession, Rotation, RotationOutcome, SessionInfo, SessionStore } from './session-store';
import { CREATE_SCRIPT, REVOKE_BY_HASH_SCRIPT, REVOKE_SCRIPT, REVOKE_USER_SCRIPT, ROTATE_SCRIPT } from './redis-scripts';

const RETENTION_MS = REVOCATION_RETENTION_SECONDS * 1000;

/** Clock skew between auth replicas the replay allows for: it reads the log from `applied` minus this. */
const REPLAY_SKEW_MS = 60_000;
/** Log entries replayed per Redis round trip. */
const REPLAY_PAGE = 500;
/** The log is pruned of entries past the retention at most this often. */
const PRUNE_EVERY_MS = 3_600_000;

export interface RedisSessionStoreOptions {
  /** Key prefix of the session keys; default `plinth:auth:`. */
  prefix?: string;
  /**
   * The durable copy of every revocation (the users' database). With it, a revocation is
   * acknowledged only once it is there too, and a Redis data set that may lack some (a failover
   * to a replica, a restart) is refused (503) until the log has been replayed into it.
   * Without it (unit tests of the Redis scripts) Redis is the only copy.
   */
  log?: RevocationLog;
  /** PLINTH_REVOCATION_SYNC_PREFIX. */
  syncPrefix?: string;
  logger?: Logger;
  now?: () => number;
}

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
 *
 * Redis is a cache of the session state in front of the durable RevocationLog: every revocation
 * is written to Redis (for every reader at once) and then to the log, and answered only after
 * both. A data set that may have missed some (RedisRevocationSync) is refused until the log is
 * replayed into it, so a failover to a lagging replica cannot bring a signed-out session back.
 */
export class RedisSessionStore implements SessionStore {
  readonly revocations: RedisRevocationChecker;
  private readonly prefix: string;
  private readonly applied: string;
  private readonly log: RevocationLog | undefined;
  /** Set when there is a log: the confirmation that this Redis holds every revocation. */
  readonly sync: RedisRevocationSync | undefined;
  private readonly now: () => number;
  private lastPrune = 0;

  constructor(
    private readonly redis: Redis,
    opts: RedisSessionStoreOptions = {},
  ) {
    this.prefix = opts.prefix ?? DEFAULT_AUTH_REDIS_PREFIX;
    const syncPrefix = opts.syncPrefix ?? DEFAULT_REVOCATION_SYNC_PREFIX;
    // Without a log there is nothing to replay from: the data set's revocation time is not kept.
    this.applied = opts.log ? appliedKey(syncPrefix) : '';
    this.log = opts.log;
    this.now = opts.now ?? Date.now;
    this.sync = opts.log ? new RedisRevocationSync(redis, syncPrefix, { replay: () => this.replay(), logger: opts.logger }) : undefined;
    this.revocations = new RedisRevocationChecker(redis, this.prefix, { sync: this.sync });
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
    // A session is handed out only by a data set known to hold every revocation, so a sign-in
    // that succeeded means every service reads this Redis again.
    await this.sync?.confirm();
    await this.run(CREATE_SCRIPT, [this.prefix, project, s.id, s.user_id, s.refresh_hash, s.now, s.expires_at, RETENTION_MS, s.aal ?? 1]);
  }

  async rotate(project: ProjectId, rot: Rotation): Promise<RotationOutcome> {
    await this.sync?.confirm();
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
      this.applied,
    ])) as string[];
    const [outcome, id, userId, createdAt, expiresAt, aal, grace] = r;
    // The family was revoked for reuse: that is recorded whatever else happens.
    if (outcome === 'reused' && id) await this.logRevoked(project, [id], rot.now);
    // A rotation on a data set that may have forgotten this family's revocation is not trusted.
    this.sync?.assertConfirmed();
    if (outcome === 'invalid' || !id || !userId) return { outcome: 'invalid' };
    const session: SessionInfo = { id, user_id: userId, created_at: Number(createdAt), expires_at: Number(expiresAt), aal: aal === '2' ? 2 : 1 };
    if (outcome === 'rotated') return { outcome, session };
    if (outcome === 'grace' && grace !== undefined) return { outcome, session, grace };
    return { outcome: 'reused', session };
  }

  async getActive(project: ProjectId, sid: string, now: number): Promise<SessionInfo | null> {
    await this.sync?.confirm();
    const [userId, createdAt, expiresAt, revokedAt, aal] = await this.redis.hmget(
      `${this.prefix}sess:${project}:${sid}`,
      'user_id',
      'created_at',
      'expires_at',
      'revoked_at',
      'aal',
    );
    this.sync?.assertConfirmed();
    if (!userId || revokedAt !== null || Number(expiresAt) <= now) return null;
    return { id: sid, user_id: userId, created_at: Number(createdAt), expires_at: Number(expiresAt), aal: aal === '2' ? 2 : 1 };
  }

  async revokeByRefreshHash(project: ProjectId, refreshHash: string, now: number): Promise<boolean> {
    const r = (await this.run(REVOKE_BY_HASH_SCRIPT, [this.prefix, project, refreshHash, now, REVOCATION_RETENTION_SECONDS, this.applied])) as
      | [string, number]
      | null;
    if (!r) return false;
    if (r[1] === 1) await this.logRevoked(project, [r[0]], now);
    return true;
  }

  async revoke(project: ProjectId, sid: string, now: number): Promise<boolean> {
    const live = (await this.run(REVOKE_SCRIPT, [this.prefix, project, sid, now, REVOCATION_RETENTION_SECONDS, this.applied])) === 1;
    if (live) await this.logRevoked(project, [sid], now);
    return live;
  }

  async revokeUser(project: ProjectId, userId: string, now: number): Promise<number> {
    const sids = (await this.run(REVOKE_USER_SCRIPT, [this.prefix, project, userId, now, REVOCATION_RETENTION_SECONDS, this.applied])) as string[];
    await this.logRevoked(project, sids, now);
    return sids.length;
  }

  /** The durable half of a revocation: the caller answers only after it. */
  private async logRevoked(project: ProjectId, sids: string[], now: number): Promise<void> {
    if (!this.log || sids.length === 0) return;
    await this.log.record(sids.map((sid) => ({ project, sid, at: now })));
    if (now - this.lastPrune >= PRUNE_EVERY_MS) {
      this.lastPrune = now;
      // Entries past the retention refuse no token that is still valid. A failed prune is retried an hour on.
      this.log.prune(now - RETENTION_MS).catch(() => undefined);
    }
  }

  /**
   * Writes into Redis every logged revocation it may lack: those from its `applied` time (minus
   * the clock skew allowed between replicas) on, or the whole retention when it has none (an
   * empty or new data set). Sessions the data set does not hold need nothing: unknown sessions
   * are refused anyway.
   */
  private async replay(): Promise<void> {
    const log = this.log!;
    const applied = await this.redis.get(this.applied);
    const since = applied === null ? this.now() - RETENTION_MS : Number(applied) - REPLAY_SKEW_MS;
    let page = await log.since(since, REPLAY_PAGE);
    while (page.length > 0) {
      const batch = this.redis.pipeline();
      for (const e of page) batch.eval(REVOKE_SCRIPT, 0, this.prefix, e.project, e.sid, e.at, REVOCATION_RETENTION_SECONDS, this.applied);
      const replies = await batch.exec();
      for (const [err] of replies ?? []) if (err) throw err;
      page = await log.since(since, REPLAY_PAGE, page[page.length - 1] as RevokedSession);
    }
  }

  async purgeProject(project: ProjectId, now: number): Promise<void> {
    // Project ids are [a-z0-9-]: no glob characters, and the `:` after the id ends the match.
    for await (const keys of this.redis.scanStream({ match: `${this.prefix}sess:${project}:*`, count: 500 })) {
      for (const key of keys as string[]) {
        const sid = key.slice(`${this.prefix}sess:${project}:`.length);
        if ((await this.run(REVOKE_SCRIPT, [this.prefix, project, sid, now, REVOCATION_RETENTION_SECONDS, this.applied])) === 1) {
          await this.logRevoked(project, [sid], now);
        }
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
    this.sync?.stop();
  }
}
