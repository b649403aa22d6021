import path from 'node:path';
import type { Logger } from 'pino';
import {
  assertDiskSpace,
  connectRedis,
  FailSafeStore,
  createAnnouncementsFromConfig,
  RedisNonceStore,
  redisBreaker,
  SqliteRateLimitStore,
  createEventBusFromConfig,
  loadIoredis,
  openSqlite,
  OutboxRelay,
  RedisEventBus,
  SqliteEventBus,
  SqliteOutboxSource,
  type OutboxSource,
  startTrimming,
  type Announcements,
  type BuiltService,
  type EventBus,
  type EventRetention,
  type ProjectId,
  type ResolveSubscription,
  type SqliteDatabase,
  type MailQueue,
  type WebhookQueue,
} from '@plinth/shared';
import { buildWebhooks, type Webhooks } from './webhooks/webhooks';
import type { Resolver } from './webhooks/webhook-http';
import { buildRecordsApp, purgeRecords } from './app';
import { limitsFromConfig, type RecordsConfig } from './config';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import type { AccessPolicy } from './domain/access-policy';
import { createRulesPolicy } from './rules/policy';
import type { AuthenticateUser } from './routes/records-routes';
import { userTokenAuthenticator, userTokenSourcesFromConfig, type UserTokenSources } from './user-tokens';
import { MongoRecordStore } from './store/mongo/mongo-record-store';
import type { RecordStore } from './store/record-store';
import { SqliteRecordStore } from './store/sqlite/sqlite-record-store';
import { createHmac } from 'node:crypto';
import { openFileStorage, type FileStorageConfig } from './files/storage/open-file-storage';
import type { FileStorage } from './files/storage/file-storage';
import { fileKey } from './files/storage/file-storage';
import { ProjectFileSweeps } from './files/project-file-sweeps';

/**
 * The file storage PLINTH_FILE_STORAGE names (docs/files.md "Storage"); by default GridFS when
 * records run on MongoDB, else the disk under the data directory.
 */
export async function openRecordFiles(config: RecordsConfig, store: RecordStore): Promise<FileStorage> {
  const kind = config.PLINTH_FILE_STORAGE ?? (store instanceof MongoRecordStore ? 'gridfs' : 'disk');
  const cfg: FileStorageConfig = {};
  if (kind === 's3') {
    const id = config.PLINTH_FILES_S3_ACCESS_KEY_ID;
    const secret = config.PLINTH_FILES_S3_SECRET_ACCESS_KEY;
    cfg.s3 = {
      bucket: config.PLINTH_FILES_S3_BUCKET as string,
      keyPrefix: config.PLINTH_FILES_S3_PREFIX,
      endpoint: config.PLINTH_FILES_S3_ENDPOINT,
      region: config.PLINTH_FILES_S3_REGION,
      forcePathStyle: config.PLINTH_FILES_S3_FORCE_PATH_STYLE,
      ...(id && secret ? { credentials: { accessKeyId: id, secretAccessKey: secret } } : {}),
    };
  } else if (kind === 'gridfs') {
    if (!(store instanceof MongoRecordStore)) throw new Error('PLINTH_FILE_STORAGE=gridfs needs records on MongoDB (MONGO_URL).');
    cfg.mongoDb = store.db;
  } else {
    cfg.dataDir = config.PLINTH_DATA_DIR;
  }
  return openFileStorage(cfg);
}

/** The key file tokens are signed with: derived from the internal secret every replica shares. */
export function fileTokenSecret(internalSecret: string): string {
  return createHmac('sha256', internalSecret).update('plinth file tokens').digest('base64url');
}

export interface RecordsServiceOptions {
  logRequests?: boolean;
  /** Defaults to the security rules engine (docs/rules.md). */
  policy?: AccessPolicy;
  /** Overrides user-token verification entirely (tests). */
  authenticateUser?: AuthenticateUser;
  /**
   * Standalone mode passes the in-process auth service's JWKS and revocation list. Default: from
   * configuration (AUTH_URL, REDIS_URL).
   */
  userTokens?: UserTokenSources;
  /**
   * Where committed changes are announced (standalone shares one with the realtime service).
   * Default: from configuration — Redis Streams on REDIS_URL, else the outbox in `${PLINTH_DATA_DIR}/records.db`.
   */
  events?: EventBus;
  /**
   * The bus of project deletions and key changes (each drops the project's cached signing keys).
   * Default: from configuration — Redis pub/sub on REDIS_URL, else
   * `${PLINTH_DATA_DIR}/announcements.db`; standalone passes the one its process shares with auth.
   */
  announcements?: Announcements;
  /** Standalone: the webhook queue shared with auth (user events). Default: from configuration. */
  webhookQueue?: WebhookQueue;
  /** Webhook deliveries' name resolution (tests). */
  webhookResolver?: Resolver;
  /** Standalone: the mail queue, for the operator's mail when a webhook is disabled. */
  mailQueue?: MailQueue;
}

/** The records service, plus its in-process subscribe entry point (standalone realtime uses it). */
export interface RecordsService extends BuiltService {
  subscribe: ResolveSubscription;
}

/**
 * MongoDB when MONGO_URL is set, else the SQLite file `${PLINTH_DATA_DIR}/records.db` with
 * PLINTH_SQLITE_READERS reader threads for queries (each query first runs on the event loop for
 * up to PLINTH_SQLITE_INLINE_QUERY_MS).
 */
export async function openRecordStore(config: RecordsConfig): Promise<RecordStore> {
  if (config.MONGO_URL) {
    return MongoRecordStore.connect(config.MONGO_URL, {
      commitTimeMs: config.PLINTH_MONGO_COMMIT_TIMEOUT_MS,
      // The change events are kept in the outbox collection, each written in its change's
      // transaction: webhooks read them always, and with Redis (cluster) the relay copies them.
      outbox: true,
      admission: { maxQueued: config.PLINTH_QUERY_QUEUE_LIMIT, maxWaitMs: config.PLINTH_QUERY_QUEUE_MS },
    });
  }
  return SqliteRecordStore.open(path.join(config.PLINTH_DATA_DIR, 'records.db'), {
    readers: config.PLINTH_SQLITE_READERS,
    inlineQueryMs: config.PLINTH_SQLITE_INLINE_QUERY_MS,
    // The change events are kept in records.db, each written with its change (the outbox):
    // realtime reads them standalone, webhooks always, and in a cluster the relay copies them to
    // Redis (docs/architecture.md "The outbox").
    outbox: true,
    admission: { maxQueued: config.PLINTH_QUERY_QUEUE_LIMIT, maxWaitMs: config.PLINTH_QUERY_QUEUE_MS },
  });
}

/** Waits between the attempts to publish a change event after its write committed (cluster). */
const PUBLISH_RETRIES_MS = [50, 100, 200, 400, 800, 1600];

/** Prefix of the records service's rate-limit counters in Redis. */
export const RECORDS_RATE_LIMIT_PREFIX = 'plinth:records:rl:';

/** The limit each records counter (rate-limits.ts) is checked against. */
function counterLimit(config: RecordsConfig, counter: string): number {
  const limits: Record<string, number> = {
    key: config.PLINTH_RATE_LIMIT_SECRET_KEY,
    user: config.PLINTH_RATE_LIMIT_USER,
    address: config.PLINTH_RATE_LIMIT_ADDRESS,
    anonymous: config.PLINTH_RATE_LIMIT_ANONYMOUS,
    project: config.PLINTH_RATE_LIMIT_PUBLIC_KEY,
  };
  return limits[counter] ?? 0;
}

/** The outbox's retention (PLINTH_EVENTS_MAX, PLINTH_EVENTS_MAX_AGE_MINUTES). */
function retentionOf(config: RecordsConfig): EventRetention {
  return { maxEvents: config.PLINTH_EVENTS_MAX, maxAgeMs: config.PLINTH_EVENTS_MAX_AGE_MINUTES * 60_000 };
}

/** Runs `task` once a minute until the returned function is called. */
function startInterval(task: () => Promise<void>, onError: (err: unknown) => void): () => void {
  const timer = setInterval(() => void task().catch(onError), 60_000);
  timer.unref?.();
  return () => clearInterval(timer);
}

/** What the relay needs of a store's outbox: the rows, and purges and trims of them. */
interface OutboxLog {
  source: OutboxSource;
  purge(project: ProjectId): Promise<number>;
  trim(): Promise<void>;
  close(): Promise<void>;
}

/** The outbox of `store`: the `events` table of records.db, or the MongoDB outbox collection. */
function outboxLogOf(store: RecordStore, config: RecordsConfig): OutboxLog {
  const retention = retentionOf(config);
  if (store instanceof MongoRecordStore) {
    const log = store.outboxLog();
    return { source: log.source, purge: log.purge, trim: () => log.trim(retention), close: async () => {} };
  }
  const file = path.join(config.PLINTH_DATA_DIR, 'records.db');
  // The outbox's own upkeep (purges, trims); its tails are never started here.
  const bus = new SqliteEventBus({ file, retention });
  const source = new SqliteOutboxSource(file);
  return {
    source,
    purge: (project) => bus.purge(project),
    trim: () => bus.trim(),
    close: async () => {
      await source.close();
      await bus.close();
    },
  };
}

/** The outbox relay of a cluster (docs/architecture.md "The outbox"): one process at a time holds its lease. */
function startRelay(store: RecordStore, config: RecordsConfig, logger: Logger): { relay: OutboxRelay; outbox: OutboxLog; stop: () => Promise<void> } {
  const outbox = outboxLogOf(store, config);
  const trimTimer = setInterval(() => void outbox.trim().catch((err: unknown) => logger.warn({ err }, 'outbox trim failed')), 60_000);
  trimTimer.unref?.();
  const redis = new (loadIoredis().Redis)(config.REDIS_URL!, { maxRetriesPerRequest: 2 });
  redis.on('error', () => {});
  const relay = new OutboxRelay({
    redis,
    source: outbox.source,
    prefix: config.PLINTH_EVENTS_PREFIX,
    shards: config.PLINTH_EVENTS_SHARDS,
    maxPerShard: Math.ceil(config.PLINTH_EVENTS_MAX / config.PLINTH_EVENTS_SHARDS),
    onError: (err) => logger.warn({ err }, 'outbox relay: Redis unavailable, will go on from what it holds'),
  });
  relay.start();
  return {
    relay,
    outbox,
    stop: async () => {
      clearInterval(trimTimer);
      await relay.stop();
      await outbox.close();
      redis.disconnect();
    },
  };
}

/** Wires the records service's adapters from configuration. Used by main.ts and by standalone mode. */
export async function buildRecordsService(
  config: RecordsConfig,
  logger: Logger,
  opts: RecordsServiceOptions = {},
): Promise<RecordsService> {
  const store = await openRecordStore(config);
  const fileStorage = await openRecordFiles(config, store);
  const sweeps = new ProjectFileSweeps(fileStorage, store, logger, { intervalMs: config.PLINTH_FILE_SWEEP_MS });
  let limits: SqliteDatabase | null = null;
  const limitsDb = (): SqliteDatabase => (limits ??= openSqlite(path.join(config.PLINTH_DATA_DIR, 'limits.db')));
  /** The SQLite counter stores: what they hold unwritten is written at close. */
  const limitStores: SqliteRateLimitStore[] = [];
  const redis = config.REDIS_URL ? connectRedis(config.REDIS_URL, logger, 'records') : null;
  /** What can do without Redis for a while (nonces, rate-limit counters) skips it after a failure. */
  const breaker = redis ? redisBreaker(redis) : undefined;
  const sources =
    opts.userTokens ??
    userTokenSourcesFromConfig({
      authUrl: config.AUTH_URL,
      internalSecret: config.PLINTH_INTERNAL_SECRET,
      redis,
      syncPrefix: config.PLINTH_REVOCATION_SYNC_PREFIX,
      logger,
    });
  const policy =
    opts.policy ?? createRulesPolicy({ onRuleFailure: (info) => logger.warn({ rule: info }, 'stored rule no longer valid; denying') });
  const ownAnnouncements = opts.authenticateUser || opts.announcements ? null : await createAnnouncementsFromConfig(config, logger);
  const tokens = opts.authenticateUser ? null : userTokenAuthenticator(sources, logger, opts.announcements ?? ownAnnouncements!);
  const ownBus = opts.events ? null : createEventBusFromConfig(config);
  const events = opts.events ?? ownBus!;
  const stopTrimming = ownBus ? startTrimming(ownBus, 60_000, (err) => logger.warn({ err }, 'event log trim failed')) : () => {};
  // Cluster with an outbox: the relay copies it to the Redis streams (one process at a time holds its lease).
  const relayed = store.writesEvents && events instanceof RedisEventBus ? startRelay(store, config, logger) : null;
  // MongoDB without Redis: the outbox is not relayed, so it is trimmed and purged here (its
  // events reach realtime through the bus, published after each write).
  const unrelayedMongo = store instanceof MongoRecordStore && !relayed ? store.outboxLog() : null;
  const stopMongoTrimming = unrelayedMongo ? startInterval(() => unrelayedMongo.trim(retentionOf(config)), (err) => logger.warn({ err }, 'outbox trim failed')) : () => {};
  /** Relayed: the outbox is purged (its marker is copied too) and Redis forgets the project's entries. */
  const purgeEvents = async (project: ProjectId): Promise<number> => {
    await unrelayedMongo?.purge(project);
    if (!relayed || !(events instanceof RedisEventBus)) return events.purge(project);
    const through = await relayed.outbox.purge(project);
    await events.forget(project, through);
    return through;
  };
  // Webhooks read the store's outbox: records.db's, or MongoDB's (docs/webhooks.md).
  const webhooks: Webhooks = await buildWebhooks(config, logger.child({ component: 'webhooks' }), {
    queue: opts.webhookQueue,
    resolver: opts.webhookResolver,
    mailQueue: opts.mailQueue,
    mongoDb: store instanceof MongoRecordStore ? store.db : undefined,
  });
  // The outbox of records.db is trimmed by realtime's log standalone and by the relay in a cluster;
  // here only when neither runs.
  const outboxTrimmer = !config.MONGO_URL && !relayed && !(events instanceof SqliteEventBus) ? new SqliteEventBus({ file: path.join(config.PLINTH_DATA_DIR, 'records.db') }) : null;
  const stopOutboxTrimming = outboxTrimmer ? startTrimming(outboxTrimmer, 60_000, (err) => logger.warn({ err }, 'outbox trim failed')) : () => {};
  if (events instanceof SqliteEventBus) events.onAppended(() => webhooks.wake());
  // The bus reads the store's outbox itself (records.db, or the relay's copy): a write only wakes it.
  const busHasOutbox = store.writesEvents && (relayed !== null || !(store instanceof MongoRecordStore));
  const { app, subscribe } = buildRecordsApp({
    logger,
    internalSecret: config.PLINTH_INTERNAL_SECRET,
    logRequests: opts.logRequests,
    store,
    policy,
    authenticateUser: opts.authenticateUser ?? tokens!,
    onPurge: (project) => tokens?.forget(project),
    nonceStore: redis ? new RedisNonceStore(redis, config.PLINTH_NONCE_PREFIX, { breaker }) : undefined,
    // Redis holds the sessions user tokens are checked against: without it those reads fail.
    ready: async () => {
      await store.ping();
      if (!config.MONGO_URL) assertDiskSpace(config.PLINTH_DATA_DIR);
      await redis?.ping();
    },
    publish: async (event) => {
      webhooks.wake();
      if (busHasOutbox) {
        // The event committed with the write (the outbox): only wake the readers, or the relay.
        if (events instanceof SqliteEventBus) events.notifyAppended();
        relayed?.relay.poke();
        return;
      }
      // The write is committed: its event is retried while the log is briefly away (a Redis
      // restarting or failing over), ≈3 s in all, before the write answers.
      for (let attempt = 0; ; attempt++) {
        try {
          await events.publish(event);
          return;
        } catch (err) {
          if (attempt < PUBLISH_RETRIES_MS.length) {
            await new Promise((r) => setTimeout(r, PUBLISH_RETRIES_MS[attempt]));
            continue;
          }
          // Only realtime delivery of it is lost (subscribers resync when the log changed epoch). Say so loudly.
          logger.error({ err, project: event.project, collection: event.collection, kind: event.kind }, 'change event not published');
          return;
        }
      }
    },
    purgeEvents: (project) => purgeEvents(project),
    limits: limitsFromConfig(config),
    files: {
      storage: fileStorage,
      tokenSecret: fileTokenSecret(config.PLINTH_INTERNAL_SECRET),
      sweeps,
      // File tokens end with the session they were asked under, as its user tokens do.
      ...(sources.revocations ? { isSessionRevoked: (project: ProjectId, sid: string, iat: number) => sources.revocations!.isRevoked(project, sid, iat) } : {}),
    },
    maxBatchOperations: config.PLINTH_MAX_BATCH_OPERATIONS,
    webhooks,
    rateLimits: {
      perPublicKey: config.PLINTH_RATE_LIMIT_PUBLIC_KEY,
      perAnonymous: config.PLINTH_RATE_LIMIT_ANONYMOUS,
      perAddress: config.PLINTH_RATE_LIMIT_ADDRESS,
      perSecretKey: config.PLINTH_RATE_LIMIT_SECRET_KEY,
      perUser: config.PLINTH_RATE_LIMIT_USER,
      // Counters fail safe: while Redis or the disk cannot count, each process counts in memory.
      makeStore: redis
        ? (name) =>
            new FailSafeStore(
              new RedisStore({
                prefix: `${RECORDS_RATE_LIMIT_PREFIX}${name}:`,
                sendCommand: (command: string, ...args: string[]) => redis.call(command, ...args) as Promise<RedisReply>,
              }),
              breaker,
            )
        : // Without Redis: counters in one SQLite file of the data dir, shared by every worker
          // process. Each process writes its hits in batches of 1 % of the limit (or every 20 ms).
          (name) => {
            // A process may count 1 % of the limit before writing, so the processes together may
            // let through about 1 % more per process.
            const limit = counterLimit(config, name);
            const store = new SqliteRateLimitStore(limitsDb(), `records:${name}:`, { localBatch: Math.floor(limit / 100), limit });
            limitStores.push(store);
            return new FailSafeStore(store);
          },
    },
  });
  return {
    name: 'records',
    app,
    purge: async (project) => {
      await purgeRecords(store, project);
      await fileStorage.deletePrefix(fileKey(project));
      // The change events carry record data: they go too, realtime replicas or not.
      await purgeEvents(project);
      await webhooks.purge(project);
      tokens?.forget(project);
    },
    subscribe,
    stopAdmission: () => store.stopAdmission(),
    close: async () => {
      stopTrimming();
      stopOutboxTrimming();
      stopMongoTrimming();
      await webhooks.close();
      await outboxTrimmer?.close();
      await relayed?.stop();
      await ownBus?.close();
      await ownAnnouncements?.close();
      sweeps.stop();
      await fileStorage.close();
      await store.close();
      for (const counter of limitStores) counter.shutdown();
      limits?.close();
      redis?.disconnect();
    },
  };
}
