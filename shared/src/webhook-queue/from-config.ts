import path from 'node:path';
import Joi from 'joi';
import type { Logger } from 'pino';
import { commonConfig } from '../config';
import { BullMqJobQueue } from '../mail-queue/bullmq-job-queue';
import { EmbeddedJobQueue } from '../mail-queue/embedded-job-queue';
import type { JobQueue } from '../mail-queue/job-queue';
import { assertWebhookJob, WEBHOOK_QUEUE_NAME, type WebhookJob } from './webhook-job';

/** The webhook queue: the job queue (BullMQ or the embedded outbox) carrying WebhookJobs. */
export type WebhookQueue = JobQueue<WebhookJob>;

/**
 * The environment both ends of the webhook queue read (records and auth produce, records
 * consumes). Spread `webhookQueueConfigKeys` into a service's Joi schema.
 */
export interface WebhookQueueConfig {
  /** Set: BullMQ on this Redis. Unset: the embedded outbox in `${PLINTH_DATA_DIR}/webhooks.db`. */
  REDIS_URL?: string;
  PLINTH_DATA_DIR: string;
  /** Base of the exponential backoff between delivery attempts, in ms (default 5 s). */
  PLINTH_WEBHOOK_BACKOFF_MS: number;
  /** How long a delivery is retried before it becomes a dead letter, in ms (default 24 h). */
  PLINTH_WEBHOOK_RETRY_WINDOW_MS: number;
  /** Embedded outbox: longest wait between looks for due jobs, in ms. */
  PLINTH_WEBHOOK_POLL_MS: number;
  /** BullMQ queue name; default WEBHOOK_QUEUE_NAME (producers and consumers must agree). */
  PLINTH_WEBHOOK_QUEUE?: string;
}

export const webhookQueueConfigKeys = {
  REDIS_URL: commonConfig.redisUrl,
  PLINTH_DATA_DIR: commonConfig.dataDir,
  PLINTH_WEBHOOK_BACKOFF_MS: Joi.number().integer().min(1).max(3_600_000).default(5000),
  PLINTH_WEBHOOK_RETRY_WINDOW_MS: Joi.number().integer().min(1).max(7 * 24 * 3_600_000).default(24 * 3_600_000),
  PLINTH_WEBHOOK_POLL_MS: Joi.number().integer().min(5).max(60_000).default(1000),
  PLINTH_WEBHOOK_QUEUE: Joi.string().pattern(/^[A-Za-z0-9_.-]{1,100}$/),
};

/**
 * Attempts that fit the retry window: attempt n starts `backoff × (2^(n-1) − 1)` after the first,
 * so this is the most attempts whose last one starts within the window (at least 1, at most 25).
 * 5 s and 24 h: 15 attempts, the last ≈ 22.8 h after the first.
 */
export function webhookAttempts(backoffMs: number, windowMs: number): number {
  return Math.max(1, Math.min(25, 1 + Math.floor(Math.log2(windowMs / backoffMs + 1))));
}

/**
 * Builds the webhook queue the configuration asks for. Standalone builds it ONCE and hands the
 * same instance to records and auth; cluster processes each build their own on the same Redis.
 */
export function createWebhookQueueFromConfig(config: WebhookQueueConfig, opts: { logger?: Logger; concurrency?: number } = {}): WebhookQueue {
  const common = {
    attempts: webhookAttempts(config.PLINTH_WEBHOOK_BACKOFF_MS, config.PLINTH_WEBHOOK_RETRY_WINDOW_MS),
    backoffMs: config.PLINTH_WEBHOOK_BACKOFF_MS,
    concurrency: opts.concurrency ?? 8,
    logger: opts.logger,
  };
  if (config.REDIS_URL) {
    return new BullMqJobQueue<WebhookJob>(
      { ...common, redisUrl: config.REDIS_URL, queueName: config.PLINTH_WEBHOOK_QUEUE },
      { queueName: WEBHOOK_QUEUE_NAME, validate: assertWebhookJob, jobName: (job) => job.kind },
    );
  }
  return new EmbeddedJobQueue<WebhookJob>(
    { ...common, file: path.join(config.PLINTH_DATA_DIR, 'webhooks.db'), pollMs: config.PLINTH_WEBHOOK_POLL_MS },
    { table: 'webhook_outbox', component: 'webhook-queue', label: 'webhook', validate: assertWebhookJob },
  );
}
