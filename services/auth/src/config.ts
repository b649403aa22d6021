import Joi from 'joi';
import { commonConfig } from '@plinth/shared';

/** Environment of the auth service, validated at start-up (README: Configuration). */
export interface AuthConfig {
  PORT: number;
  PLINTH_INTERNAL_SECRET: string;
  PLINTH_DATA_DIR: string;
  LOG_LEVEL: string;
}

export const authConfigSchema = Joi.object<AuthConfig>({
  PORT: commonConfig.port(8082),
  PLINTH_INTERNAL_SECRET: commonConfig.internalSecret.required(),
  PLINTH_DATA_DIR: commonConfig.dataDir,
  LOG_LEVEL: commonConfig.logLevel,
});
