import fs from 'node:fs';
import Joi from 'joi';
import {
  commonConfig,
  eventBusConfigSchema,
  nonceConfigKeys,
  revocationSyncConfigKeys,
  type EventBusConfig,
  type NonceConfig,
  type RevocationSyncConfig,
} from '@plinth/shared';

/** Environment of the realtime service, validated at start-up (README: Configuration, docs/realtime.md). */
export interface RealtimeConfig extends EventBusConfig, RevocationSyncConfig, NonceConfig {
  PORT: number;
  PLINTH_INTERNAL_SECRET: string;
  LOG_LEVEL: string;
  /** Cluster: the records service (subscribe endpoint); comma-separated replicas. */
  RECORDS_URL?: string;
  /** Largest client message accepted (bytes); bigger ones close the connection with 1009. */
  REALTIME_MAX_MESSAGE_BYTES: number;
  /** Per-connection send buffer limit (bytes); a client that falls behind further is closed with 4008. */
  REALTIME_MAX_BUFFERED_BYTES: number;
  /** Subscriptions one connection may hold. */
  REALTIME_MAX_SUBSCRIPTIONS_PER_CONNECTION: number;
  /** Connections one project may hold on one replica. */
  REALTIME_MAX_CONNECTIONS_PER_PROJECT: number;
  /** How often the server pings each connection (ms). */
  REALTIME_PING_INTERVAL_MS: number;
  /** A connection silent this long (no message, no pong) is closed with 4002 (ms). */
  REALTIME_IDLE_TIMEOUT_MS: number;
  /** How often the sessions of signed-in connections are checked for revocation (ms). */
  REALTIME_REVOCATION_CHECK_MS: number;
  /** Events of its collection one catch-up (resume) may replay; more answer resync_required. */
  REALTIME_CATCHUP_MAX_EVENTS: number;
  /** Stored bytes of history one catch-up may read; more answer resync_required. */
  REALTIME_CATCHUP_MAX_BYTES: number;
  /** Stored bytes of history one connection may replay per minute. */
  REALTIME_CATCHUP_BYTES_PER_MINUTE_PER_CONNECTION: number;
  /** Stored bytes of history one project's connections may replay per minute (per process). */
  REALTIME_CATCHUP_BYTES_PER_MINUTE_PER_PROJECT: number;
  /** Catch-ups reading the log at once, per project and per process (one per connection). */
  REALTIME_CATCHUPS_PER_PROJECT: number;
  REALTIME_CATCHUPS_PER_PROCESS: number;
  /** How long a catch-up waits for its turn before the subscription is answered with a resync (ms). */
  REALTIME_CATCHUP_WAIT_MS: number;
  /** Connections of the whole process (close 1013 beyond): by default its file-descriptor limit less 1,024. */
  REALTIME_MAX_CONNECTIONS: number;
  /** Public-key connections of one project on one process (the rest of the project's share is for secret keys). */
  REALTIME_MAX_PUBLIC_CONNECTIONS_PER_PROJECT: number;
  /** Public-key connections of one project from one client address on one process. */
  REALTIME_MAX_CONNECTIONS_PER_ADDRESS: number;
  /** Connections signed in as one user of a project on one process. */
  REALTIME_MAX_CONNECTIONS_PER_USER: number;
  /** Messages a connection may send per second (pings included), and in a burst; close 4009 beyond. */
  REALTIME_MESSAGES_PER_SECOND: number;
  REALTIME_MESSAGE_BURST: number;
}

/**
 * The process's soft limit on open files, less 1,024 for its databases, outgoing calls and the
 * health check (Linux: /proc/self/limits); 10,000 where it cannot be read.
 */
export function connectionsBelowFileLimit(): number {
  try {
    const m = /^Max open files\s+(\d+)/m.exec(fs.readFileSync('/proc/self/limits', 'utf8'));
    if (m) return Math.max(100, Math.min(1_000_000, Number(m[1]) - 1024));
  } catch {
    /* not Linux */
  }
  return 10_000;
}

export const realtimeConfigSchema = Joi.object<RealtimeConfig>({
  PORT: commonConfig.port(8084),
  PLINTH_INTERNAL_SECRET: commonConfig.internalSecret.required(),
  PLINTH_DATA_DIR: commonConfig.dataDir,
  LOG_LEVEL: commonConfig.logLevel,
  REDIS_URL: commonConfig.redisUrl,
  ...revocationSyncConfigKeys,
  ...nonceConfigKeys,
  RECORDS_URL: commonConfig.urlList,
  REALTIME_MAX_MESSAGE_BYTES: Joi.number().integer().min(1024).max(1_048_576).default(65_536),
  REALTIME_MAX_BUFFERED_BYTES: Joi.number().integer().min(4096).max(268_435_456).default(4_194_304),
  REALTIME_MAX_SUBSCRIPTIONS_PER_CONNECTION: Joi.number().integer().min(1).max(10_000).default(100),
  REALTIME_MAX_CONNECTIONS_PER_PROJECT: Joi.number().integer().min(1).max(1_000_000).default(10_000),
  REALTIME_PING_INTERVAL_MS: Joi.number().integer().min(100).max(600_000).default(25_000),
  REALTIME_IDLE_TIMEOUT_MS: Joi.number().integer().min(200).max(3_600_000).default(60_000),
  REALTIME_REVOCATION_CHECK_MS: Joi.number().integer().min(50).max(1000).default(250),
  REALTIME_CATCHUP_MAX_EVENTS: Joi.number().integer().min(1).max(1_000_000).default(10_000),
  REALTIME_CATCHUP_MAX_BYTES: Joi.number().integer().min(1024).max(268_435_456).default(2_097_152),
  REALTIME_CATCHUP_BYTES_PER_MINUTE_PER_CONNECTION: Joi.number().integer().min(1024).max(1_073_741_824).default(16_777_216),
  REALTIME_CATCHUP_BYTES_PER_MINUTE_PER_PROJECT: Joi.number().integer().min(1024).max(17_179_869_184).default(67_108_864),
  REALTIME_CATCHUPS_PER_PROJECT: Joi.number().integer().min(1).max(1000).default(4),
  REALTIME_CATCHUPS_PER_PROCESS: Joi.number().integer().min(1).max(1000).default(8),
  REALTIME_CATCHUP_WAIT_MS: Joi.number().integer().min(0).max(60_000).default(5000),
  REALTIME_MAX_CONNECTIONS: Joi.number().integer().min(1).max(1_000_000).default(() => connectionsBelowFileLimit()),
  REALTIME_MAX_PUBLIC_CONNECTIONS_PER_PROJECT: Joi.number().integer().min(1).max(1_000_000).default(9000),
  REALTIME_MAX_CONNECTIONS_PER_ADDRESS: Joi.number().integer().min(1).max(1_000_000).default(100),
  REALTIME_MAX_CONNECTIONS_PER_USER: Joi.number().integer().min(1).max(1_000_000).default(20),
  REALTIME_MESSAGES_PER_SECOND: Joi.number().integer().min(1).max(100_000).default(20),
  REALTIME_MESSAGE_BURST: Joi.number().integer().min(1).max(100_000).default(200),
  ...eventBusConfigSchema,
});
