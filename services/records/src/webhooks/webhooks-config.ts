import Joi from 'joi';
import { mailQueueConfigKeys, webhookQueueConfigKeys, type MailQueueConfig, type WebhookQueueConfig } from '@plinth/shared';

/** The records service's webhook settings (docs/webhooks.md "Configuration"). */
export interface WebhooksConfig extends WebhookQueueConfig, MailQueueConfig {
  /** Comma-separated hosts, IP literals and CIDRs webhooks may reach although private (default none). */
  PLINTH_WEBHOOK_ALLOW_HOSTS: string;
  /** Per attempt, connect to answer, in ms (default 10 s). */
  PLINTH_WEBHOOK_TIMEOUT_MS: number;
  /** Dead deliveries in a row that disable a webhook (default 20). */
  PLINTH_WEBHOOK_DISABLE_AFTER: number;
  /** Key material for the signing secrets at rest (default PLINTH_INTERNAL_SECRET). */
  PLINTH_WEBHOOK_KEY?: string;
  /** Longest wait between two reads of the change log by the dispatcher, in ms (default 1 s). */
  PLINTH_WEBHOOK_DISPATCH_MS: number;
  /** Deliveries in flight at once per process (default 8). */
  PLINTH_WEBHOOK_CONCURRENCY: number;
  /** How often pending deliveries' jobs are enqueued again, in case the queue lost them (default 60 s). */
  PLINTH_WEBHOOK_REQUEUE_MS: number;
  /** Told by mail (the mail queue) when a webhook is disabled for its failures; unset: no mail. */
  PLINTH_OPERATOR_EMAIL?: string;
}

export const webhooksConfigKeys = {
  ...mailQueueConfigKeys,
  ...webhookQueueConfigKeys,
  PLINTH_WEBHOOK_ALLOW_HOSTS: Joi.string().allow('').max(4000).default(''),
  PLINTH_WEBHOOK_TIMEOUT_MS: Joi.number().integer().min(100).max(60_000).default(10_000),
  PLINTH_WEBHOOK_DISABLE_AFTER: Joi.number().integer().min(1).max(100_000).default(20),
  PLINTH_WEBHOOK_KEY: Joi.string().min(32),
  PLINTH_WEBHOOK_DISPATCH_MS: Joi.number().integer().min(5).max(60_000).default(1000),
  PLINTH_WEBHOOK_CONCURRENCY: Joi.number().integer().min(1).max(256).default(8),
  PLINTH_WEBHOOK_REQUEUE_MS: Joi.number().integer().min(100).max(3_600_000).default(60_000),
  PLINTH_OPERATOR_EMAIL: Joi.string().email({ tlds: false }).max(320),
};
