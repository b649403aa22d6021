import os from 'node:os';
import Joi from 'joi';
import { commonConfig } from '@plinth/shared';
import { isInside } from './backup/data-files';
import { nextRun } from './backup/cron';

const urlList = commonConfig.urlList;

const shared = {
  PLINTH_DATA_DIR: commonConfig.dataDir,
  MONGO_URL: commonConfig.mongoUrl,
  PLINTH_MONGO_COMMIT_TIMEOUT_MS: commonConfig.mongoCommitTimeoutMs,
  PLINTH_CORS_ORIGINS: Joi.string().default('*'),
  PLINTH_KEY_CACHE_TTL_MS: Joi.number().integer().min(0).max(600_000).default(5000),
  PLINTH_TRUST_PROXY: Joi.number().integer().min(0).max(10).default(0),
  PLINTH_BODY_TIMEOUT_MS: Joi.number().integer().min(100).max(300_000).default(10_000),
  PLINTH_METRICS_PORT: Joi.number().integer().min(1).max(65535),
  PLINTH_PURGE_RETRY_MS: Joi.number().integer().min(10).max(600_000).default(5000),
  PLINTH_PURGE_TIMEOUT_MS: Joi.number().integer().min(100).max(600_000).default(10_000),
  PLINTH_AUDIT_RETENTION_DAYS: Joi.number().integer().min(1).max(3650).default(90),
  PLINTH_OPERATOR_SESSION_TTL_S: Joi.number().integer().min(1).max(86_400).default(1800),
  PLINTH_OPERATOR_SESSION_MAX_S: Joi.number().integer().min(60).max(30 * 86_400).default(43_200),
  PLINTH_OPERATOR_BCRYPT_COST: Joi.number().integer().min(4).max(15).default(10),
  LOG_LEVEL: commonConfig.logLevel,
};

export interface GatewaySharedConfig {
  PLINTH_DATA_DIR: string;
  MONGO_URL?: string;
  /** maxCommitTimeMS of every MongoDB transaction: a commit not acknowledged in time answers 503. */
  PLINTH_MONGO_COMMIT_TIMEOUT_MS: number;
  PLINTH_CORS_ORIGINS: string;
  PLINTH_KEY_CACHE_TTL_MS: number;
  PLINTH_TRUST_PROXY: number;
  /** Longest time to receive a request body before 408. */
  PLINTH_BODY_TIMEOUT_MS: number;
  /** When set, `/metrics` is also served without the operator key on this port (for Prometheus). */
  PLINTH_METRICS_PORT?: number;
  /** First delay between retries of a project purge a service did not finish (doubles up to 60 s). */
  PLINTH_PURGE_RETRY_MS: number;
  /** Cluster: how long the gateway waits for one service to purge a project. */
  PLINTH_PURGE_TIMEOUT_MS: number;
  /** Audit entries older than this many days are pruned (hourly). */
  PLINTH_AUDIT_RETENTION_DAYS: number;
  /** An operator session's life without a refresh, in seconds. */
  PLINTH_OPERATOR_SESSION_TTL_S: number;
  /** The longest refreshes keep an operator session alive, in seconds. */
  PLINTH_OPERATOR_SESSION_MAX_S: number;
  /** bcrypt cost factor of operator passwords. */
  PLINTH_OPERATOR_BCRYPT_COST: number;
  LOG_LEVEL: string;
}

/** Cluster mode: the gateway alone, proxying to services at the given URLs. */
export interface GatewayConfig extends GatewaySharedConfig {
  PORT: number;
  /** Key-cache invalidation across gateway replicas (Redis pub/sub); without it, PLINTH_KEY_CACHE_TTL_MS bounds staleness. */
  REDIS_URL?: string;
  PLINTH_ADMIN_KEY: string;
  PLINTH_INTERNAL_SECRET: string;
  RECORDS_URL: string;
  AUTH_URL: string;
  MAILER_URL: string;
  /** The realtime service's replicas (WebSocket upgrades are proxied there); optional. */
  REALTIME_URL?: string;
  /** The address users reach; only reported to the operator (`plinth doctor`) — mail links use the mailer's. */
  PLINTH_PUBLIC_URL?: string;
}

export const gatewayConfigSchema = Joi.object<GatewayConfig>({
  ...shared,
  PORT: commonConfig.port(8080),
  REDIS_URL: commonConfig.redisUrl,
  PLINTH_ADMIN_KEY: Joi.string().min(20).required(),
  PLINTH_INTERNAL_SECRET: commonConfig.internalSecret.required(),
  RECORDS_URL: urlList.required(),
  AUTH_URL: urlList.required(),
  MAILER_URL: urlList.required(),
  REALTIME_URL: urlList,
  PLINTH_PUBLIC_URL: Joi.string().uri({ scheme: ['http', 'https'] }),
});

/** Standalone mode: gateway plus every service in one process. Keys are generated when unset. */
export interface StandaloneConfig extends GatewaySharedConfig {
  PORT: number;
  HOST: string;
  PLINTH_ADMIN_KEY?: string;
  PLINTH_INTERNAL_SECRET?: string;
  /** Worker processes sharing the port and the data directory; 1 = everything in this one process. */
  PLINTH_WORKERS: number;
  /** When set, a backup is taken at each time this cron expression names, into PLINTH_BACKUP_DIR. */
  PLINTH_BACKUP_CRON?: string;
  /** Where scheduled backups go (outside the data directory); required with PLINTH_BACKUP_CRON. */
  PLINTH_BACKUP_DIR?: string;
  /** How many scheduled backups to keep (the newest); older ones are removed after each backup. */
  PLINTH_BACKUP_KEEP: number;
}

const cronExpression = Joi.string().custom((value: string) => {
  nextRun(value, new Date()); // throws on an expression cron-parser cannot read
  return value;
}).messages({ 'any.custom': '{{#label}} is not a cron expression: {{#error.message}}' });

export const standaloneConfigSchema = Joi.object<StandaloneConfig>({
  ...shared,
  PORT: commonConfig.port(8080),
  // Loopback unless told otherwise: a laptop's Plinth is not offered to the whole network.
  HOST: Joi.string().default('127.0.0.1'),
  PLINTH_WORKERS: Joi.number().integer().min(1).max(64).default(() => os.availableParallelism()),
  PLINTH_ADMIN_KEY: Joi.string().min(20),
  PLINTH_INTERNAL_SECRET: commonConfig.internalSecret,
  PLINTH_BACKUP_CRON: cronExpression,
  PLINTH_BACKUP_DIR: Joi.string().when('PLINTH_BACKUP_CRON', { is: Joi.exist(), then: Joi.required() }),
  PLINTH_BACKUP_KEEP: Joi.number().integer().min(1).max(10_000).default(7),
})
  .custom((value: StandaloneConfig, helpers) => {
    if (value.PLINTH_BACKUP_DIR && isInside(value.PLINTH_BACKUP_DIR, value.PLINTH_DATA_DIR)) return helpers.message({ custom: '"PLINTH_BACKUP_DIR" must be outside PLINTH_DATA_DIR' });
    return value;
  });

export function parseOrigins(value: string): '*' | string[] {
  return value.trim() === '*' ? '*' : value.split(',').map((s) => s.trim()).filter(Boolean);
}

export function parseUrlList(value: string): string[] {
  return value.split(',').map((s) => s.trim()).filter(Boolean);
}

/**
 * Where mail links point in standalone mode: PLINTH_PUBLIC_URL when set, else this server's own
 * address — `PORT`, and `HOST` unless it is a loopback or wildcard address (then `localhost`) — so
 * that verification and reset links work on any port without a second setting.
 */
export function standalonePublicUrl(config: Pick<StandaloneConfig, 'PORT' | 'HOST'>, env: NodeJS.ProcessEnv): string {
  const given = env.PLINTH_PUBLIC_URL;
  if (given) return given;
  const local = ['127.0.0.1', '0.0.0.0', '::', '::1', 'localhost'].includes(config.HOST);
  const host = local ? 'localhost' : config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
  return `http://${host}:${config.PORT}`;
}
