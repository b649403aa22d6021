import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { Router } from 'express';
import type { Logger } from 'pino';
import {
  DB_USER_TOKEN_HEADER,
  InternalClient,
  RedisRevocationChecker,
  RedisRevocationSync,
  DEFAULT_AUTH_REDIS_PREFIX,
  UnavailableError,
  asProjectId,
  createEventBusFromConfig,
  createMetrics,
  createServiceApp,
  loadIoredis,
  RedisNonceStore,
  redisBreaker,
  startTrimming,
  type BuiltService,
  type EventBus,
  type ResolveSubscription,
  type RevocationChecker,
  type SubscriptionAnswer,
} from '@plinth/shared';
import type { RealtimeConfig } from './config';
import { Hub } from './hub';
import { realtimeMetrics } from './metrics';

export interface RealtimeServiceOptions {
  logRequests?: boolean;
  /** Standalone shares the records service's bus. Default: from configuration. */
  events?: EventBus;
  /** Standalone calls records in-process. Default: POST to RECORDS_URL with the internal credential. */
  resolve?: ResolveSubscription;
  /** Standalone passes auth's in-process list. Default: Redis markers on REDIS_URL. */
  revocations?: RevocationChecker;
}

export interface RealtimeService extends BuiltService {
  /** Give it the `upgrade` events of the HTTP server (standalone: the gateway's, after key checks). */
  handleUpgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /** Closes every client connection with 1001 and stops accepting (first step of a shutdown). */
  closeConnections: () => Promise<void>;
}

/** Stored bytes a catch-up reads per page: the event loop runs between pages. */
const CATCH_UP_PAGE_BYTES = 256 * 1024;
/** Catch-ups waiting for their turn in one process; one more is answered with a resync at once. */
const CATCH_UPS_WAITING = 1000;

/** The subscribe endpoint over HTTP (cluster), with the client's key kind and user token. */
export function httpResolver(recordsUrl: string, internalSecret: string): ResolveSubscription {
  const client = new InternalClient({ baseUrl: recordsUrl, internalSecret });
  return async (call) => {
    const path = `/v1/projects/${call.project}/collections/${encodeURIComponent(call.collection)}/subscribe`;
    const headers: Record<string, string> = call.userToken === undefined ? {} : { [DB_USER_TOKEN_HEADER]: call.userToken };
    const res = await client.postJson<{ subscription: SubscriptionAnswer }>(call.project, call.keyKind, path, call.body, headers);
    return res.subscription;
  };
}

/** Wires the realtime service from configuration (main.ts) or from standalone's shared parts. */
export async function buildRealtimeService(config: RealtimeConfig, logger: Logger, opts: RealtimeServiceOptions = {}): Promise<RealtimeService> {
  const ownBus = opts.events ? null : createEventBusFromConfig(config);
  const bus = opts.events ?? ownBus!;
  const redis = !opts.revocations && config.REDIS_URL ? new (loadIoredis().Redis)(config.REDIS_URL, { maxRetriesPerRequest: 2 }) : null;
  // Trusted only while that Redis is known to hold every durable revocation (after a failover, once auth replayed them).
  const revocations =
    opts.revocations ??
    (redis
      ? new RedisRevocationChecker(redis, DEFAULT_AUTH_REDIS_PREFIX, {
          sync: new RedisRevocationSync(redis, config.PLINTH_REVOCATION_SYNC_PREFIX, { logger }),
        })
      : undefined);
  const resolve =
    opts.resolve ??
    (config.RECORDS_URL
      ? httpResolver(config.RECORDS_URL, config.PLINTH_INTERNAL_SECRET)
      : async () => {
          throw new UnavailableError('Subscriptions cannot be resolved: the realtime service has no RECORDS_URL.');
        });
  const metrics = createMetrics('realtime', { defaultMetrics: !opts.events });
  const hub = new Hub({
    bus,
    resolve,
    revocations,
    metrics: realtimeMetrics(metrics.registry),
    logger,
    internalSecret: config.PLINTH_INTERNAL_SECRET,
    // Cluster: the gateway's upgrade credential is accepted once across replicas (standalone's upgrades are in-process).
    nonceStore: redis ? new RedisNonceStore(redis, config.PLINTH_NONCE_PREFIX, { breaker: redisBreaker(redis) }) : undefined,
    limits: {
      catchUp: { maxEvents: config.REALTIME_CATCHUP_MAX_EVENTS, maxBytes: config.REALTIME_CATCHUP_MAX_BYTES, pageBytes: CATCH_UP_PAGE_BYTES },
      catchUpGate: {
        perProject: config.REALTIME_CATCHUPS_PER_PROJECT,
        perProcess: config.REALTIME_CATCHUPS_PER_PROCESS,
        waitMs: config.REALTIME_CATCHUP_WAIT_MS,
        maxWaiting: CATCH_UPS_WAITING,
      },
      catchUpBytesPerMinute: {
        connection: config.REALTIME_CATCHUP_BYTES_PER_MINUTE_PER_CONNECTION,
        project: config.REALTIME_CATCHUP_BYTES_PER_MINUTE_PER_PROJECT,
      },
      maxMessageBytes: config.REALTIME_MAX_MESSAGE_BYTES,
      maxBufferedBytes: config.REALTIME_MAX_BUFFERED_BYTES,
      maxSubscriptionsPerConnection: config.REALTIME_MAX_SUBSCRIPTIONS_PER_CONNECTION,
      quotas: {
        perProcess: config.REALTIME_MAX_CONNECTIONS,
        perProject: config.REALTIME_MAX_CONNECTIONS_PER_PROJECT,
        publicPerProject: config.REALTIME_MAX_PUBLIC_CONNECTIONS_PER_PROJECT,
        perAddress: config.REALTIME_MAX_CONNECTIONS_PER_ADDRESS,
        perUser: config.REALTIME_MAX_CONNECTIONS_PER_USER,
      },
      messagesPerSecond: config.REALTIME_MESSAGES_PER_SECOND,
      messageBurst: config.REALTIME_MESSAGE_BURST,
      pingIntervalMs: config.REALTIME_PING_INTERVAL_MS,
      idleTimeoutMs: config.REALTIME_IDLE_TIMEOUT_MS,
      revocationCheckMs: config.REALTIME_REVOCATION_CHECK_MS,
    },
  });
  await hub.start();
  const stopTrimming = ownBus ? startTrimming(ownBus, 60_000, (err) => logger.warn({ err }, 'event log trim failed')) : () => {};
  const app = createServiceApp({
    name: 'realtime',
    internalSecret: config.PLINTH_INTERNAL_SECRET,
    logger,
    routes: Router(),
    metrics,
    logRequests: opts.logRequests,
    ready: async () => {
      await bus.head(asProjectId('readyz'));
    },
    // A deleted project: its connections end (4004); the records service purges its events.
    purge: (project) => hub.closeProject(project),
  });
  return {
    name: 'realtime',
    app,
    handleUpgrade: (req, socket, head) => hub.handleUpgrade(req, socket, head),
    closeConnections: () => hub.close(),
    purge: (project) => hub.closeProject(project),
    close: async () => {
      stopTrimming();
      await hub.close();
      await ownBus?.close();
      redis?.disconnect();
    },
  };
}
