import path from 'node:path';
import type { Logger } from 'pino';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import {
  assertDiskSpace,
  createAnnouncementsFromConfig,
  connectRedis,
  BullMqMailQueue,
  createMailQueueFromConfig,
  DEFAULT_AUTH_REDIS_PREFIX,
  RedisNonceStore,
  redisBreaker,
  openOnMongo,
  openSqlite,
  SqliteRateLimitStore,
  type Announcements,
  type BuiltService,
  type SqliteDatabase,
  type RevocationChecker,
  createWebhookQueueFromConfig,
  type WebhookQueue,
} from '@plinth/shared';
import { withUserEventWakeups } from './user-webhook-events';
import { UserEventRelay } from './user-event-relay';
import { createAuthApp } from './app';
import { systemClock, type Clock } from './clock';
import type { AuthConfig } from './config';
import { PasswordHasher } from './domain/passwords';
import { FactorSecrets } from './domain/totp';
import type { AuthContext } from './flows/auth-context';
import { AnonymousCleanup } from './flows/anonymous-cleanup';
import { BackgroundWork } from './flows/background';
import { purgeProject } from './flows/purge';
import { SettingsReader } from './flows/settings';
import type { MailOutbox } from './mail/mail-outbox';
import { RedisSafeMailOutbox } from './mail/redis-safe-mail-outbox';
import { EmbeddedSessionStore } from './store/embedded-session-store';
import { MongoRevocationLog } from './store/mongo-revocation-log';
import { MongoSessionFamilies } from './store/mongo-session-families';
import { MongoUserStore } from './store/mongo-user-store';
import { RedisSessionStore } from './store/redis-session-store';
import type { RevocationLog } from './store/revocation-log';
import { SqliteRevocationLog } from './store/sqlite-revocation-log';
import { SqliteSessionFamilies } from './store/sqlite-session-families';
import type { SessionFamilies } from './store/session-families';
import type { SessionStore } from './store/session-store';
import { SqliteUserStore } from './store/sqlite-user-store';
import type { UserStore } from './store/user-store';
import { AccessTokens } from './tokens/access-tokens';
import { SigningKeys } from './tokens/signing-keys';
import { ProviderClients } from './oauth/provider-clients';

/** Largest answer of a provider (discovery document, keys, token, user), bytes. */
const MAX_PROVIDER_RESPONSE_BYTES = 1_000_000;

export interface AuthServiceOptions {
  logRequests?: boolean;
  /** Test clock; defaults to the system clock. */
  clock?: Clock;
  /**
   * Where mail jobs go. Default: a MailQueue built from the configuration (BullMQ on REDIS_URL,
   * else the embedded outbox in `${PLINTH_DATA_DIR}/mailer.db`), owned and closed by this
   * service. Standalone mode may pass the one queue it also gives the mailer; the caller keeps
   * ownership of a queue passed here.
   */
  outbox?: MailOutbox;
  /** Queue name of the default BullMQ queue (tests use a unique one); default MAIL_QUEUE_NAME. */
  mailQueueName?: string;
  /** Prefix of every Redis key (sessions, revocations, rate limits); default `plinth:auth:`. */
  redisPrefix?: string;
  /**
   * True when the gateway reaches this service over HTTP (its own process, main.ts): the
   * gateway's proxy appends one X-Forwarded-For hop. False when mounted in-process (standalone).
   */
  behindGatewayProxy?: boolean;
  /**
   * The bus of project deletions and key changes. Default: built from the configuration (Redis
   * pub/sub on REDIS_URL, else `${PLINTH_DATA_DIR}/announcements.db`) and closed by this service;
   * standalone mode passes the one its process shares with records.
   */
  announcements?: Announcements;
  /**
   * Where user events for webhooks go (user-webhook-events.ts). Default: the webhook queue built
   * from the configuration, closed by this service; standalone passes the one records consumes.
   */
  webhookQueue?: WebhookQueue;
}

/** The auth service plus what other in-process parts may need from it. */
export interface BuiltAuthService extends BuiltService {
  /** Read side of session revocation, for services that verify user tokens in the same process. */
  revocations: RevocationChecker;
  /** The signing keys (rotation from operator tooling). */
  keys: SigningKeys;
  /** Each project's Auth settings (the mailer reads mail_from / redirect_url in standalone mode). */
  settings: SettingsReader;
  /** Resolves once the work routes started after answering (forgot, otp/request) has finished. */
  idle(): Promise<void>;
  /** Password hashes running and waiting for a thread now. */
  hashing(): { running: number; queued: number };
}

/** Wires the auth service's adapters from configuration. Used by main.ts and by standalone mode. */
export async function buildAuthService(config: AuthConfig, logger: Logger, opts: AuthServiceOptions = {}): Promise<BuiltAuthService> {
  const clock = opts.clock ?? systemClock;
  const prefix = opts.redisPrefix ?? DEFAULT_AUTH_REDIS_PREFIX;
  const closers: Array<() => Promise<void>> = [];
  // `${PLINTH_DATA_DIR}/auth.db`, opened only when an embedded store needs it (not with Mongo + Redis).
  const embedded: { db: SqliteDatabase | null } = { db: null };
  const embeddedDb = (): SqliteDatabase => (embedded.db ??= openSqlite(path.join(config.PLINTH_DATA_DIR, 'auth.db')));

  let users: UserStore;
  // The durable copies of sessions and revocations, beside the users, for a Redis session cache.
  let revocationLog = async (): Promise<RevocationLog> => new SqliteRevocationLog(embeddedDb());
  let sessionFamilies = async (): Promise<SessionFamilies> => new SqliteSessionFamilies(embeddedDb());
  if (config.MONGO_URL) {
    const commitTimeoutMs = config.PLINTH_MONGO_COMMIT_TIMEOUT_MS;
    users = await openOnMongo(config.MONGO_URL, (client, release) => {
      revocationLog = () => MongoRevocationLog.open(client.db());
      sessionFamilies = () => MongoSessionFamilies.open(client.db());
      return MongoUserStore.open(client.db(), release, { commitTimeoutMs });
    });
  } else {
    users = new SqliteUserStore(embeddedDb());
  }
  closers.push(() => users.close());
  // User events for webhooks (docs/webhooks.md "User events"): records consumes the queue, on
  // SQLite and on MongoDB alike.
  let webhookQueue = opts.webhookQueue;
  if (!webhookQueue) {
    const own = createWebhookQueueFromConfig(config, { logger });
    closers.push(() => own.close());
    webhookQueue = own;
  }
  // The relay hands the user events' outbox rows to the queue; stopped first (closers run in order), before the store and the queue close.
  const relay = new UserEventRelay(users.events, webhookQueue, logger, { pollMs: config.PLINTH_WEBHOOK_POLL_MS });
  relay.start();
  closers.unshift(() => relay.stop());
  users = withUserEventWakeups(users, relay);

  const redis = config.REDIS_URL ? connectRedis(config.REDIS_URL, logger, 'auth') : null;
  const sessions: SessionStore = redis
    ? new RedisSessionStore(redis, {
        durable: await sessionFamilies(),
        prefix,
        log: await revocationLog(),
        syncPrefix: config.PLINTH_REVOCATION_SYNC_PREFIX,
        logger,
        now: clock,
      })
    : new EmbeddedSessionStore(embeddedDb(), clock);
  closers.push(() => sessions.close());
  if (sessions instanceof RedisSessionStore && sessions.sync) {
    // Start serving once Redis is known to hold every session change (rebuilt from the durable
    // store if it is new or empty), or answer 503 for session reads until it is (Redis down at
    // start must not stop the process).
    await sessions.sync.ready(2000).catch(() => logger.warn('redis revocation sync: not confirmed at start; session reads answer 503 until it is'));
  }
  if (redis) {
    closers.push(async () => {
      await redis.quit();
    });
  }

  let outbox = opts.outbox;
  if (!outbox) {
    const queue = createMailQueueFromConfig(config, { logger, queueName: opts.mailQueueName });
    closers.push(() => queue.close());
    outbox = queue;
    if (queue instanceof BullMqMailQueue) {
      // The queue lives in Redis: each mail is also kept in the users' database until the queue
      // delivered it, and enqueued again if Redis loses it. Stopped before the queue and the store close.
      const safe = new RedisSafeMailOutbox(users.mails, queue, config.PLINTH_INTERNAL_SECRET, logger, { checkMs: config.PLINTH_MAIL_RECHECK_MS });
      safe.start();
      closers.unshift(() => safe.stop());
      outbox = safe;
    }
  }
  let announcements = opts.announcements;
  if (!announcements) {
    const own = await createAnnouncementsFromConfig(config, logger);
    closers.push(() => own.close());
    announcements = own;
  }
  const keys = new SigningKeys(users, clock, announcements);
  const background = new BackgroundWork(logger);
  const auth: AuthContext = {
    users,
    sessions,
    outbox,
    passwords: new PasswordHasher(config.PLINTH_BCRYPT_COST, {
      concurrency: config.PLINTH_HASH_CONCURRENCY ?? config.UV_THREADPOOL_SIZE,
      maxQueued: config.PLINTH_HASH_MAX_QUEUED,
      maxWaitMs: config.PLINTH_HASH_MAX_WAIT_MS,
    }),
    keys,
    tokens: new AccessTokens(keys, config.PLINTH_ISSUER, clock),
    settings: new SettingsReader(users, config.PLINTH_OAUTH_ALLOW_HTTP),
    clock,
    announcements,
    background,
    anonymous: new AnonymousCleanup(users, config.PLINTH_ANONYMOUS_MAX_IDLE_DAYS * 86_400_000),
    factorSecrets: new FactorSecrets(config.PLINTH_MFA_KEY ?? config.PLINTH_INTERNAL_SECRET),
    oauth: {
      publicUrl: config.PLINTH_PUBLIC_URL.replace(/\/+$/, ''),
      clients: new ProviderClients({
        allowHttp: config.PLINTH_OAUTH_ALLOW_HTTP,
        fetchTimeoutMs: config.PLINTH_OAUTH_FETCH_TIMEOUT_MS,
        maxResponseBytes: MAX_PROVIDER_RESPONSE_BYTES,
      }),
      log: logger,
    },
  };

  const app = createAuthApp({
    logger,
    internalSecret: config.PLINTH_INTERNAL_SECRET,
    auth,
    trustProxy: config.PLINTH_TRUST_PROXY + (opts.behindGatewayProxy ? 1 : 0),
    logRequests: opts.logRequests,
    rateLimits: {
      perIp: config.PLINTH_RATE_LIMIT_IP,
      perEmail: config.PLINTH_RATE_LIMIT_EMAIL,
      makeStore: redis
        ? (name) =>
            new RedisStore({
              prefix: `${prefix}rl:${name}:`,
              sendCommand: (command: string, ...args: string[]) => redis.call(command, ...args) as Promise<RedisReply>,
            })
        : // Standalone: counters in auth.db, so every worker process counts against one limit.
          (name) => new SqliteRateLimitStore(embeddedDb(), `${name}:`),
    },
    nonceStore: redis ? new RedisNonceStore(redis, config.PLINTH_NONCE_PREFIX, { breaker: redisBreaker(redis) }) : undefined,
    ready: async () => {
      await users.ping();
      if (embedded.db) assertDiskSpace(config.PLINTH_DATA_DIR);
      await sessions.ping();
    },
  });

  return {
    name: 'auth',
    app,
    revocations: sessions.revocations,
    keys,
    purge: (project) => purgeProject(auth, project),
    settings: auth.settings,
    idle: () => background.idle(),
    hashing: () => auth.passwords.load(),
    stopAdmission: () => auth.passwords.close(),
    close: async () => {
      await background.idle();
      for (const close of closers) await close();
      embedded.db?.close();
    },
  };
}
