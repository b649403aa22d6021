import Joi from 'joi';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { UnavailableError } from '../errors';

/** Default key prefix of the revocation sync keys (`synced`, `applied`) in Redis. */
export const DEFAULT_REVOCATION_SYNC_PREFIX = 'plinth:auth:revocations:';

/** Read by every service that reads or writes session state in Redis (auth, records, realtime). */
export interface RevocationSyncConfig {
  /** Key prefix of the sync keys, so deployments that share one Redis keep theirs apart. */
  PLINTH_REVOCATION_SYNC_PREFIX: string;
}

/** Spread into a service's Joi schema. */
export const revocationSyncConfigKeys = {
  PLINTH_REVOCATION_SYNC_PREFIX: Joi.string().min(1).max(200).default(DEFAULT_REVOCATION_SYNC_PREFIX),
};

/** How often a process re-checks which Redis data set it talks to (a failover behind one address). */
const CHECK_MS = 1000;
/** How often it re-checks while it waits for auth to bring a new data set up to date. */
const WAITING_CHECK_MS = 100;

/** `<prefix>synced`: the data set (see dataSetId) auth last brought up to date. */
export function syncedKey(prefix: string): string {
  return `${prefix}synced`;
}

/** `<prefix>applied`: the latest revocation time (ms) this data set received. */
export function appliedKey(prefix: string): string {
  return `${prefix}applied`;
}

/**
 * Which data set a Redis server holds: its run id (new at every start) and replication id (new
 * when a replica is promoted). A failover to a replica, or a restart, changes it.
 */
export async function dataSetId(redis: Redis): Promise<string> {
  const info = String(await redis.call('INFO', 'server', 'replication'));
  const field = (name: string) => new RegExp(`^${name}:(\\S+)`, 'm').exec(info)?.[1] ?? '?';
  return `${field('run_id')}/${field('master_replid')}`;
}

export interface RedisRevocationSyncOptions {
  /**
   * The auth service's replay: writes every durable revocation the data set may lack. Without it
   * (records, realtime) the process waits until an auth process has done so.
   */
  replay?: () => Promise<void>;
  logger?: Logger;
}

/**
 * Whether the Redis a process talks to is known to hold every revocation (the durable log's
 * copy). Redis is a cache of the session state: a failover to a replica that lagged, or a
 * restart, can lose revocations, and only the durable log can bring them back. So each process
 * checks, on every (re)connection and every second, which data set it talks to (dataSetId); a
 * data set is trusted once `revocations:synced` names it, which auth sets after replaying the
 * log into it. Until then `assertConfirmed` throws (503): no session state is read from a Redis
 * that may have forgotten a sign-out. The cost is one INFO and one GET per second per process.
 */
export class RedisRevocationSync {
  private confirmed = false;
  /** Moves on every new connection: a check begun on an older one does not confirm this one. */
  private generation = 0;
  private running: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly redis: Redis,
    /** PLINTH_REVOCATION_SYNC_PREFIX. */
    private readonly prefix: string = DEFAULT_REVOCATION_SYNC_PREFIX,
    private readonly opts: RedisRevocationSyncOptions = {},
  ) {
    // A new connection may reach another data set: distrust it before any reply is read from it.
    redis.on('ready', () => {
      this.confirmed = false;
      this.generation++;
      this.check();
    });
    redis.on('end', () => this.stop());
    if (redis.status === 'ready') this.check();
    this.schedule(CHECK_MS);
  }

  /** Throws UnavailableError (503) unless this process's Redis is known to hold every revocation. */
  assertConfirmed(): void {
    if (!this.confirmed) throw new UnavailableError('Session state is being restored after a Redis failover; try again shortly.');
  }

  /**
   * Resolves at once when confirmed; otherwise checks now (joining a check under way) instead of
   * waiting for the timer, and throws UnavailableError if the data set is still not confirmed.
   * Called before a session is read or written, so the first request after a reconnection does
   * not fail for want of a check that would have succeeded.
   */
  async confirm(): Promise<void> {
    if (this.confirmed) return;
    this.check();
    while (this.running) await this.running;
    this.assertConfirmed();
  }

  /** Resolves once the Redis is confirmed (tests, start-up). */
  async ready(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.confirmed) {
      if (Date.now() > deadline) throw new Error('Redis revocation state was not confirmed in time.');
      this.check();
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(ms: number): void {
    this.stop();
    this.timer = setTimeout(() => {
      this.check();
      this.schedule(this.confirmed ? CHECK_MS : WAITING_CHECK_MS);
    }, ms);
    this.timer.unref();
  }

  /** One check at a time; a check asked for meanwhile runs after it. */
  private check(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.checkOnce()
      // A check that fails (Redis down, hung) changes nothing: the data set can only change with a
      // new connection (which unconfirms it) or be seen to have changed by a check that succeeds.
      .catch((err: unknown) => {
        this.opts.logger?.warn({ err: err instanceof Error ? err.message : String(err) }, 'redis revocation sync: check failed');
      })
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.check();
        }
      });
  }

  private async checkOnce(): Promise<void> {
    const generation = this.generation;
    const id = await dataSetId(this.redis);
    if ((await this.redis.get(syncedKey(this.prefix))) === id) {
      if (generation === this.generation) this.confirmed = true;
      return;
    }
    this.confirmed = false;
    if (!this.opts.replay) return;
    await this.opts.replay();
    // Only if it is still the same data set (no failover during the replay).
    if ((await dataSetId(this.redis)) !== id) return;
    await this.redis.set(syncedKey(this.prefix), id);
    if (generation === this.generation) this.confirmed = true;
    this.opts.logger?.info({ data_set: id }, 'redis revocation sync: revocations replayed into a new Redis data set');
  }
}
