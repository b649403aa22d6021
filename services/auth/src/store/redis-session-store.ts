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
import type { SessionFamilies, StoredSession } from './session-families';
import type { NewSession, Rotation, RotationOutcome, SessionInfo, SessionStore } from './session-store';
import { CACHE_SCRIPT, REVOKE_SCRIPT, REVOKE_USER_SCRIPT } from './redis-scripts';

const RETENTION_MS = REVOCATION_RETENTION_SECONDS * 1000;

/** Clock skew between auth replicas the rebuild allows for: it reads from `applied` minus this. */
const REPLAY_SKEW_MS = 60_000;
/** Log entries or sessions written per Redis round trip during a rebuild. */
const REPLAY_PAGE = 500;
/** The log is pruned of entries past the retention at most this often. */
const PRUNE_EVERY_MS = 3_600_000;

export interface RedisSessionStoreOptions {
  /** The durable copy of every session family (the users' database): the truth Redis caches. */
  durable: SessionFamilies;
  /** Key prefix of the session keys; default `plinth:auth:`. */
  prefix?: string;
  /**
   * The durable copy of every revocation (the users' database). With it, a Redis data set that
   * may lack some session state (a failover to a replica, a restart, a new empty instance) is
   * refused (503) until it has been rebuilt: the log's revocations and the durable store's live
   * sessions written into it. Without it (unit tests of the cache) nothing is rebuilt.
   */
  log?: RevocationLog;
  /** PLINTH_REVOCATION_SYNC_PREFIX. */
  syncPrefix?: string;
  logger?: Logger;
  now?: () => number;
}

/**
 * SessionStore for a cluster: the families live in the durable store (`durable`, SQLite or
 * MongoDB, session-families.ts), and Redis is a cache of what every service reads on every
 * request. Keys, under `prefix` (default `plinth:auth:`):
 *
 *   sess:<project>:<sid>        hash: user_id, created_at, expires_at, aal, revoked_at
 *   user:<project>:<user_id>    set: the user's sids
 *   revoked:<project>:<sid>     string: revocation time in seconds — read by other services
 *                               through @plinth/shared RedisRevocationChecker
 *
 * Every change is made in the durable store first (a rotation is decided there, atomically), then
 * in Redis, and answered after both: a session is never live in Redis unless it is live in the
 * durable store, and a revocation reaches Redis before it is acknowledged. Reading a session
 * (the hot path) is one Redis round trip; only a session Redis does not hold is looked up in the
 * durable store, and put back. A Redis data set that may lack session state — restarted empty,
 * a new instance after a restore, a replica promoted while it lagged — is rebuilt before any
 * service trusts it (RedisRevocationSync): revocations from the log, then every live session
 * changed since the data set's `applied` time (all of them for an empty one).
 */
export class RedisSessionStore implements SessionStore {
  readonly revocations: RedisRevocationChecker;
  private readonly prefix: string;
  private readonly applied: string;
  /** Set while a rebuild is under way: where it started reading, so a retried rebuild reads from there too. */
  private readonly rebuildFrom: string;
  private readonly durable: SessionFamilies;
  private readonly log: RevocationLog | undefined;
  /** Set when there is a log: the confirmation that this Redis holds every session change. */
  readonly sync: RedisRevocationSync | undefined;
  private readonly logger: Logger | undefined;
  private readonly now: () => number;
  private lastPrune = 0;

  constructor(
    private readonly redis: Redis,
    opts: RedisSessionStoreOptions,
  ) {
    this.prefix = opts.prefix ?? DEFAULT_AUTH_REDIS_PREFIX;
    const syncPrefix = opts.syncPrefix ?? DEFAULT_REVOCATION_SYNC_PREFIX;
    // Without a log there is no rebuild: the data set's time is not kept.
    this.applied = opts.log ? appliedKey(syncPrefix) : '';
    this.rebuildFrom = `${syncPrefix}rebuild_from`;
    this.durable = opts.durable;
    this.log = opts.log;
    this.logger = opts.logger;
    this.now = opts.now ?? Date.now;
    this.sync = opts.log ? new RedisRevocationSync(redis, syncPrefix, { replay: () => this.rebuild(), logger: opts.logger }) : undefined;
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

  /** CACHE_SCRIPT's arguments; `applied` empty for a read-through or a rebuild (not a change of this moment). */
  private cacheArgs(project: ProjectId, s: SessionInfo, now: number, updatedAt: number, applied: string): Array<string | number> {
    return [this.prefix, project, s.id, s.user_id, s.created_at, s.expires_at, s.aal, now, RETENTION_MS, REVOCATION_RETENTION_SECONDS, applied, updatedAt];
  }

  private async cache(project: ProjectId, s: SessionInfo, now: number, applied: string): Promise<boolean> {
    return (await this.run(CACHE_SCRIPT, this.cacheArgs(project, s, now, now, applied))) === 1;
  }

  async create(project: ProjectId, s: NewSession): Promise<void> {
    // A session is handed out only by a data set known to hold every session change, so a
    // sign-in that succeeded means every service reads this Redis again.
    await this.sync?.confirm();
    await this.durable.create(project, s);
    const info: SessionInfo = { id: s.id, user_id: s.user_id, created_at: s.now, expires_at: s.expires_at, aal: s.aal ?? 1 };
    await this.cache(project, info, s.now, this.applied);
  }

  async rotate(project: ProjectId, rot: Rotation): Promise<RotationOutcome> {
    await this.sync?.confirm();
    const r = await this.durable.rotate(project, rot);
    if (r.outcome === 'rotated') await this.cache(project, r.session, rot.now, this.applied);
    // The family was revoked for reuse (in the durable store): every reader refuses it too.
    if (r.outcome === 'reused') await this.revokeCached(project, [r.session.id], [], rot.now);
    return r;
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
    if (userId) {
      if (revokedAt !== null || Number(expiresAt) <= now) return null;
      return { id: sid, user_id: userId, created_at: Number(createdAt), expires_at: Number(expiresAt), aal: aal === '2' ? 2 : 1 };
    }
    // Not cached (evicted, or a data set that lost it): the durable store decides, and the answer is cached.
    const s = await this.durable.getActive(project, sid, now);
    if (!s) return null;
    return (await this.cache(project, s, now, '')) ? s : null;
  }

  async revokeByRefreshHash(project: ProjectId, refreshHash: string, now: number): Promise<boolean> {
    const r = await this.durable.revokeByRefreshHash(project, refreshHash, now);
    if (!r) return false;
    await this.revokeCached(project, [r.sid], r.live ? [r.sid] : [], now);
    return true;
  }

  async revoke(project: ProjectId, sid: string, now: number): Promise<boolean> {
    const live = await this.durable.revoke(project, sid, now);
    await this.revokeCached(project, [sid], live ? [sid] : [], now);
    return live;
  }

  async revokeUser(project: ProjectId, userId: string, now: number): Promise<number> {
    const sids = await this.durable.revokeUser(project, userId, now);
    // The user's cached sessions too: a retried call whose first try revoked durably but failed here.
    const cached = (await this.run(REVOKE_USER_SCRIPT, [this.prefix, project, userId, now, REVOCATION_RETENTION_SECONDS, this.applied])) as string[];
    await this.revokeCached(project, sids, cached, now);
    return sids.length;
  }

  /**
   * The Redis half of a revocation already made durably: marks `sids` revoked for every reader,
   * then logs those that were live in either copy (`known`, plus those Redis still held live), so
   * a retried call whose first try failed half-way still completes both.
   */
  private async revokeCached(project: ProjectId, sids: string[], known: string[], now: number): Promise<void> {
    const live = new Set(known);
    for (const sid of sids) {
      if ((await this.run(REVOKE_SCRIPT, [this.prefix, project, sid, now, REVOCATION_RETENTION_SECONDS, this.applied])) === 1) live.add(sid);
    }
    await this.logRevoked(project, [...live], now);
  }

  /** The log half of a revocation: the caller answers only after it. */
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
   * Brings a data set that may lack session state up to date from the durable copies: every
   * logged revocation and every live session changed since its `applied` time (less the clock
   * skew allowed between replicas), or everything when it has none (an empty or new data set).
   * Revocations first; a session revoked while the rebuild runs keeps its marker, which the cache
   * script respects, so nothing revoked comes back. A rebuild that fails half-way is retried
   * from where the first one started (`rebuild_from`), not from a time its own writes raised.
   */
  private async rebuild(): Promise<void> {
    const log = this.log!;
    const now = this.now();
    const applied = await this.redis.get(this.applied);
    await this.redis.set(this.rebuildFrom, applied === null ? 0 : Number(applied) - REPLAY_SKEW_MS, 'NX');
    const since = Math.min(Number(await this.redis.get(this.rebuildFrom)), applied === null ? 0 : Number(applied) - REPLAY_SKEW_MS);
    // The log keeps the retention only; older revocations refuse no token that is still valid.
    const logSince = Math.max(since, now - RETENTION_MS);
    let revoked = 0;
    let page = await log.since(logSince, REPLAY_PAGE);
    while (page.length > 0) {
      const batch = this.redis.pipeline();
      for (const e of page) batch.eval(REVOKE_SCRIPT, 0, this.prefix, e.project, e.sid, e.at, REVOCATION_RETENTION_SECONDS, this.applied);
      await execAll(batch);
      revoked += page.length;
      page = await log.since(logSince, REPLAY_PAGE, page[page.length - 1] as RevokedSession);
    }
    let sessions = 0;
    let live = await this.durable.changedSince(since, now, REPLAY_PAGE);
    while (live.length > 0) {
      const batch = this.redis.pipeline();
      for (const s of live) batch.eval(CACHE_SCRIPT, 0, ...this.cacheArgs(s.project, s, now, s.updated_at, ''));
      await execAll(batch);
      sessions += live.length;
      live = await this.durable.changedSince(since, now, REPLAY_PAGE, live[live.length - 1] as StoredSession);
    }
    await this.redis.del(this.rebuildFrom);
    this.logger?.info({ since, revoked, sessions }, 'redis session cache rebuilt from the durable store');
  }

  async purgeProject(project: ProjectId, now: number): Promise<void> {
    const durableLive = await this.durable.purgeProject(project);
    const live = new Set(durableLive);
    for (const sid of durableLive) await this.run(REVOKE_SCRIPT, [this.prefix, project, sid, now, REVOCATION_RETENTION_SECONDS, this.applied]);
    // Project ids are [a-z0-9-]: no glob characters, and the `:` after the id ends the match.
    for await (const keys of this.redis.scanStream({ match: `${this.prefix}sess:${project}:*`, count: 500 })) {
      for (const key of keys as string[]) {
        const sid = key.slice(`${this.prefix}sess:${project}:`.length);
        if ((await this.run(REVOKE_SCRIPT, [this.prefix, project, sid, now, REVOCATION_RETENTION_SECONDS, this.applied])) === 1) live.add(sid);
      }
      if ((keys as string[]).length > 0) await this.redis.unlink(...(keys as string[]));
    }
    for await (const keys of this.redis.scanStream({ match: `${this.prefix}user:${project}:*`, count: 500 })) {
      if ((keys as string[]).length > 0) await this.redis.unlink(...(keys as string[]));
    }
    await this.logRevoked(project, [...live], now);
  }

  async ping(): Promise<void> {
    await this.redis.ping();
    await this.durable.ping();
  }

  async close(): Promise<void> {
    // The connection belongs to the caller (shared with the rate limiter).
    this.sync?.stop();
  }
}

async function execAll(batch: ReturnType<Redis['pipeline']>): Promise<void> {
  const replies = await batch.exec();
  for (const [err] of replies ?? []) if (err) throw err;
}
