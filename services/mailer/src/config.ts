import Joi from 'joi';
import { commonConfig } from '@plinth/shared';

/** Environment of the mailer service, validated at start-up (README: Configuration). */
export interface MailerConfig {
  PORT: number;
  PLINTH_INTERNAL_SECRET: string;
  PLINTH_DATA_DIR: string;
  LOG_LEVEL: string;
}

export const mailerConfigSchema = Joi.object<MailerConfig>({
  PORT: commonConfig.port(8083),
  PLINTH_INTERNAL_SECRET: commonConfig.internalSecret.required(),
  PLINTH_DATA_DIR: commonConfig.dataDir,
  LOG_LEVEL: commonConfig.logLevel,
});
