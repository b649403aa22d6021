import { DEFAULT_MAX_BATCH_OPERATIONS, MAX_BATCH_OPERATIONS_CEILING } from './operations/batch-request';
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
import { DEFAULT_LIMITS, type RecordLimits } from './domain/limits';
import { webhooksConfigKeys, type WebhooksConfig } from './webhooks/webhooks-config';

/** Environment of the records service, validated at start-up (README: Configuration). */
export interface RecordsConfig extends EventBusConfig, NonceConfig, RevocationSyncConfig, WebhooksConfig {
  PORT: number;
  PLINTH_INTERNAL_SECRET: string;
  PLINTH_DATA_DIR: string;
  LOG_LEVEL: string;
  /** When set, records live in MongoDB; otherwise in `${PLINTH_DATA_DIR}/records.db` (SQLite). */
  MONGO_URL?: string;
  /** maxCommitTimeMS of every MongoDB transaction: a commit not acknowledged in time answers 503. */
  PLINTH_MONGO_COMMIT_TIMEOUT_MS: number;
  /** Cluster: the auth service, whose JWKS verifies `X-Db-User-Token`. */
  AUTH_URL?: string;
  /** Cluster: the Redis the auth service writes session revocations to; also holds rate limits. */
  REDIS_URL?: string;
  /** Limits of docs/records.md, "Limits". */
  PLINTH_MAX_TEXT_BYTES: number;
  PLINTH_MAX_LIST_ITEMS: number;
  PLINTH_MAX_JSON_BYTES: number;
  PLINTH_MAX_JSON_DEPTH: number;
  PLINTH_MAX_RECORD_BYTES: number;
  PLINTH_MAX_PAGE_BYTES: number;
  PLINTH_QUERY_TIMEOUT_MS: number;
  /** Most operations in one batch write (docs/records.md "Batch writes"): 1–500, default 100. */
  PLINTH_MAX_BATCH_OPERATIONS: number;
  /**
   * Requests per minute on record and collection endpoints per project with its public key,
   * signed-in and anonymous together: the backstop.
   */
  PLINTH_RATE_LIMIT_PUBLIC_KEY: number;
  /** Anonymous public-key requests per minute per project (lower than the public-key ceiling). */
  PLINTH_RATE_LIMIT_ANONYMOUS: number;
  /** Anonymous public-key requests per minute per client address of a project. */
  PLINTH_RATE_LIMIT_ADDRESS: number;
  /** Requests per minute per secret key. */
  PLINTH_RATE_LIMIT_SECRET_KEY: number;
  /** Requests per minute per signed-in user (X-Db-User-Token) of a project. */
  PLINTH_RATE_LIMIT_USER: number;
  /** SQLite: worker threads that run queries off the event loop (0: on the event loop). */
  PLINTH_SQLITE_READERS: number;
  /** SQLite with readers: ms a query runs on the event loop before it moves to a reader (0: never). */
  PLINTH_SQLITE_INLINE_QUERY_MS: number;
  /** Queries that may wait for a reader at once, per lane and process; more are refused (503 overloaded). */
  PLINTH_QUERY_QUEUE_LIMIT: number;
  /** Longest a query waits for a reader (ms), counted against PLINTH_QUERY_TIMEOUT_MS; past it 503 overloaded. */
  PLINTH_QUERY_QUEUE_MS: number;
  /**
   * Where records' files go (docs/files.md "Storage"): `disk` (`${PLINTH_DATA_DIR}/files`),
   * `gridfs` (records' MongoDB) or `s3` (PLINTH_FILES_S3_*). Default: gridfs with MONGO_URL, else disk.
   */
  PLINTH_FILE_STORAGE?: 'disk' | 'gridfs' | 's3';
  PLINTH_FILES_S3_BUCKET?: string;
  PLINTH_FILES_S3_PREFIX?: string;
  PLINTH_FILES_S3_ENDPOINT?: string;
  PLINTH_FILES_S3_REGION?: string;
  PLINTH_FILES_S3_FORCE_PATH_STYLE: boolean;
  PLINTH_FILES_S3_ACCESS_KEY_ID?: string;
  PLINTH_FILES_S3_SECRET_ACCESS_KEY?: string;
  /** How often files no record holds are swept (ms; 0: never). Default one hour. */
  PLINTH_FILE_SWEEP_MS: number;
}

const positive = (fallback: number) => Joi.number().integer().min(1).default(fallback);

export const recordsConfigSchema = Joi.object<RecordsConfig>({
  // First: the keys it shares with the others (REDIS_URL, PLINTH_DATA_DIR) are the same definitions.
  ...webhooksConfigKeys,
  PORT: commonConfig.port(8081),
  PLINTH_INTERNAL_SECRET: commonConfig.internalSecret.required(),
  PLINTH_DATA_DIR: commonConfig.dataDir,
  LOG_LEVEL: commonConfig.logLevel,
  MONGO_URL: commonConfig.mongoUrl.optional(),
  PLINTH_MONGO_COMMIT_TIMEOUT_MS: commonConfig.mongoCommitTimeoutMs,
  AUTH_URL: commonConfig.urlList,
  REDIS_URL: commonConfig.redisUrl,
  ...nonceConfigKeys,
  ...revocationSyncConfigKeys,
  ...eventBusConfigSchema,
  PLINTH_MAX_TEXT_BYTES: positive(DEFAULT_LIMITS.maxTextBytes),
  PLINTH_MAX_LIST_ITEMS: positive(DEFAULT_LIMITS.maxListItems),
  PLINTH_MAX_JSON_BYTES: positive(DEFAULT_LIMITS.maxJsonBytes),
  // The request body itself may nest at most 64 levels ({"data":{"field": …}} takes two).
  PLINTH_MAX_JSON_DEPTH: Joi.number().integer().min(1).max(60).default(DEFAULT_LIMITS.maxJsonDepth),
  PLINTH_MAX_RECORD_BYTES: positive(DEFAULT_LIMITS.maxRecordBytes),
  PLINTH_MAX_PAGE_BYTES: positive(DEFAULT_LIMITS.maxPageBytes),
  PLINTH_QUERY_TIMEOUT_MS: positive(DEFAULT_LIMITS.queryTimeoutMs),
  PLINTH_MAX_BATCH_OPERATIONS: Joi.number().integer().min(1).max(MAX_BATCH_OPERATIONS_CEILING).default(DEFAULT_MAX_BATCH_OPERATIONS),
  PLINTH_RATE_LIMIT_PUBLIC_KEY: Joi.number().integer().min(2).default(6000),
  // Lower than the public-key ceiling, so anonymous callers together cannot spend all of it.
  PLINTH_RATE_LIMIT_ANONYMOUS: Joi.number()
    .integer()
    .min(1)
    .less(Joi.ref('PLINTH_RATE_LIMIT_PUBLIC_KEY'))
    .default((parent: { PLINTH_RATE_LIMIT_PUBLIC_KEY: number }) => Math.floor(parent.PLINTH_RATE_LIMIT_PUBLIC_KEY / 2)),
  PLINTH_RATE_LIMIT_ADDRESS: positive(600),
  PLINTH_RATE_LIMIT_SECRET_KEY: positive(60_000),
  PLINTH_RATE_LIMIT_USER: positive(600),
  PLINTH_SQLITE_READERS: Joi.number().integer().min(0).max(16).default(2),
  PLINTH_SQLITE_INLINE_QUERY_MS: Joi.number().integer().min(0).max(50).default(0),
  PLINTH_QUERY_QUEUE_LIMIT: Joi.number().integer().min(0).max(100_000).default(100),
  PLINTH_QUERY_QUEUE_MS: Joi.number().integer().min(0).max(60_000).default(1000),
  PLINTH_FILE_STORAGE: Joi.string().valid('disk', 'gridfs', 's3'),
  PLINTH_FILES_S3_BUCKET: Joi.string().when('PLINTH_FILE_STORAGE', { is: 's3', then: Joi.required() }),
  PLINTH_FILES_S3_PREFIX: Joi.string(),
  PLINTH_FILES_S3_ENDPOINT: Joi.string().uri(),
  PLINTH_FILES_S3_REGION: Joi.string(),
  PLINTH_FILES_S3_FORCE_PATH_STYLE: Joi.boolean().default(false),
  PLINTH_FILES_S3_ACCESS_KEY_ID: Joi.string(),
  PLINTH_FILES_S3_SECRET_ACCESS_KEY: Joi.string(),
  PLINTH_FILE_SWEEP_MS: Joi.number().integer().min(0).default(60 * 60 * 1000),
});

/** The limits a records configuration sets. */
export function limitsFromConfig(config: RecordsConfig): RecordLimits {
  return {
    maxTextBytes: config.PLINTH_MAX_TEXT_BYTES,
    maxListItems: config.PLINTH_MAX_LIST_ITEMS,
    maxJsonBytes: config.PLINTH_MAX_JSON_BYTES,
    maxJsonDepth: config.PLINTH_MAX_JSON_DEPTH,
    maxRecordBytes: config.PLINTH_MAX_RECORD_BYTES,
    maxPageBytes: config.PLINTH_MAX_PAGE_BYTES,
    queryTimeoutMs: config.PLINTH_QUERY_TIMEOUT_MS,
  };
}
