import path from 'node:path';
import Joi from 'joi';
import type { Logger } from 'pino';
import { commonConfig } from '../config';
import { BullMqMailQueue } from './bullmq-mail-queue';
import { EmbeddedMailQueue } from './embedded-mail-queue';
import type { MailQueue } from './mail-queue';

/**
 * The environment both ends of the mail queue read (auth produces, the mailer consumes), so one
 * set of variables configures both. Spread `mailQueueConfigKeys` into a service's Joi schema.
 */
export interface MailQueueConfig {
  /** Set: BullMQ on this Redis. Unset: the embedded SQLite outbox. */
  REDIS_URL?: string;
  /** The embedded outbox lives in `${PLINTH_DATA_DIR}/mailer.db`. */
  PLINTH_DATA_DIR: string;
  /** Attempts per job before it becomes a dead letter. */
  PLINTH_MAIL_ATTEMPTS: number;
  /** Base of the exponential backoff between attempts, in ms. */
  PLINTH_MAIL_BACKOFF_MS: number;
  /** Embedded outbox: longest wait between looks for due jobs, in ms. */
  PLINTH_MAIL_POLL_MS: number;
  /**
   * BullMQ queue name; default MAIL_QUEUE_NAME. Producers and consumers must agree: changing it
   * strands jobs queued under the old name. Lets several deployments (or test runs) share a Redis.
   */
  PLINTH_MAIL_QUEUE?: string;
}

export const mailQueueConfigKeys = {
  REDIS_URL: commonConfig.redisUrl,
  PLINTH_DATA_DIR: commonConfig.dataDir,
  PLINTH_MAIL_ATTEMPTS: Joi.number().integer().min(1).max(25).default(5),
  PLINTH_MAIL_BACKOFF_MS: Joi.number().integer().min(1).max(3_600_000).default(5000),
  PLINTH_MAIL_POLL_MS: Joi.number().integer().min(5).max(60_000).default(1000),
  PLINTH_MAIL_QUEUE: Joi.string().pattern(/^[A-Za-z0-9_.-]{1,100}$/),
};

/** The file of the embedded outbox (shared with the mailer's dev mailbox). */
export function mailerDatabaseFile(dataDir: string): string {
  return path.join(dataDir, 'mailer.db');
}

/**
 * Builds the MailQueue the configuration asks for. In standalone mode build it ONCE and hand the
 * same instance to auth (producer) and the mailer (consumer); in cluster mode each process builds
 * its own and BullMQ connects them. The caller owns the queue and closes it. `concurrency` only
 * matters to the consumer (jobs delivered at once by this process).
 */
export function createMailQueueFromConfig(
  config: MailQueueConfig,
  opts: { logger?: Logger; queueName?: string; concurrency?: number } = {},
): MailQueue {
  const common = {
    attempts: config.PLINTH_MAIL_ATTEMPTS,
    backoffMs: config.PLINTH_MAIL_BACKOFF_MS,
    concurrency: opts.concurrency,
    logger: opts.logger,
  };
  if (config.REDIS_URL) {
    return new BullMqMailQueue({ ...common, redisUrl: config.REDIS_URL, queueName: opts.queueName ?? config.PLINTH_MAIL_QUEUE });
  }
  return new EmbeddedMailQueue({
    ...common,
    file: mailerDatabaseFile(config.PLINTH_DATA_DIR),
    pollMs: config.PLINTH_MAIL_POLL_MS,
  });
}
