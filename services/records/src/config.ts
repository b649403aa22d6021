import Joi from 'joi';
import { commonConfig, eventBusConfigSchema, type EventBusConfig } from '@plinth/shared';

/** Environment of the records service, validated at start-up (README: Configuration). */
export interface RecordsConfig extends EventBusConfig {
  PORT: number;
  PLINTH_INTERNAL_SECRET: string;
  PLINTH_DATA_DIR: string;
  LOG_LEVEL: string;
  /** When set, records live in MongoDB; otherwise in `${PLINTH_DATA_DIR}/records.db` (SQLite). */
  MONGO_URL?: string;
  /** Cluster: the auth service, whose JWKS verifies `X-Db-User-Token`. */
  AUTH_URL?: string;
  /** Cluster: the Redis the auth service writes session revocations to. */
  REDIS_URL?: string;
}

export const recordsConfigSchema = Joi.object<RecordsConfig>({
  PORT: commonConfig.port(8081),
  PLINTH_INTERNAL_SECRET: commonConfig.internalSecret.required(),
  PLINTH_DATA_DIR: commonConfig.dataDir,
  LOG_LEVEL: commonConfig.logLevel,
  MONGO_URL: commonConfig.mongoUrl.optional(),
  AUTH_URL: commonConfig.urlList,
  REDIS_URL: commonConfig.redisUrl,
  ...eventBusConfigSchema,
});
