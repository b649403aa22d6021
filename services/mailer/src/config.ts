import Joi from 'joi';
import { commonConfig, mailQueueConfigKeys, nonceConfigKeys, type MailQueueConfig, type NonceConfig } from '@plinth/shared';

/** Environment of the mailer service, validated at start-up (docs/mailer.md: Configuration). */
export interface MailerConfig extends MailQueueConfig, NonceConfig {
  PORT: number;
  PLINTH_INTERNAL_SECRET: string;
  PLINTH_DATA_DIR: string;
  LOG_LEVEL: string;
  /** Set: deliver over SMTP (nodemailer). Unset: store in the dev mailbox. */
  SMTP_URL?: string;
  /** Sender of projects that set no `mail_from`. */
  PLINTH_MAIL_FROM: string;
  /** Link base of projects that set no `redirect_url`. */
  PLINTH_PUBLIC_URL: string;
  /** Per-project template overrides: `<dir>/<project>/<kind>.{subject,txt,html}`, `<dir>/_default/…`. */
  PLINTH_MAIL_TEMPLATES_DIR?: string;
  /** Jobs this process delivers at once. */
  PLINTH_MAIL_CONCURRENCY: number;
  /**
   * Longest an SMTP server may take to accept the connection, to greet, or to answer any one
   * command (ms): past it the attempt fails and is retried, so a hung server holds a delivery
   * slot this long, not nodemailer's default 10 minutes.
   */
  PLINTH_SMTP_TIMEOUT_MS: number;
  /** Cluster: the auth service, asked for each project's `mail_from` and `redirect_url`. */
  AUTH_URL?: string;
}

export const mailerConfigSchema = Joi.object<MailerConfig>({
  ...mailQueueConfigKeys,
  ...nonceConfigKeys,
  PORT: commonConfig.port(8083),
  PLINTH_INTERNAL_SECRET: commonConfig.internalSecret.required(),
  PLINTH_DATA_DIR: commonConfig.dataDir,
  LOG_LEVEL: commonConfig.logLevel,
  SMTP_URL: Joi.string().uri({ scheme: ['smtp', 'smtps'] }),
  PLINTH_MAIL_FROM: Joi.string().max(320).default('Plinth <no-reply@localhost>'),
  PLINTH_PUBLIC_URL: Joi.string().uri({ scheme: ['http', 'https'] }).default('http://localhost:8080'),
  PLINTH_MAIL_TEMPLATES_DIR: Joi.string(),
  PLINTH_MAIL_CONCURRENCY: Joi.number().integer().min(1).max(64).default(4),
  PLINTH_SMTP_TIMEOUT_MS: Joi.number().integer().min(100).max(600_000).default(30_000),
  AUTH_URL: commonConfig.urlList,
});
