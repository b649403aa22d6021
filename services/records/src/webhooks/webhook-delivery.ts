import type { Logger } from 'pino';
import { Webhook } from 'standardwebhooks';
import type { JobAttempt, ProjectId, WebhookJob, WebhookQueue } from '@plinth/shared';
import { fanOut } from './webhook-dispatcher';
import { webhookBody } from './webhook-events';
import { sendWebhook, type Resolver } from './webhook-http';
import type { WebhookSecrets } from './webhook-secrets';
import type { WebhookStore } from './webhook-store';
import type { TargetPolicy } from './webhook-target';

export interface DeliveryOptions {
  store: WebhookStore;
  queue: WebhookQueue;
  secrets: WebhookSecrets;
  policy: TargetPolicy;
  logger: Logger;
  /** Per attempt, connect to answer (PLINTH_WEBHOOK_TIMEOUT_MS). */
  timeoutMs: number;
  /** Dead deliveries in a row that disable a webhook (PLINTH_WEBHOOK_DISABLE_AFTER). */
  disableAfter: number;
  /** Told when a webhook was just disabled for its failures (the operator's mail). */
  onDisabled?: (project: ProjectId, webhook: string, url: string) => void;
  resolver?: Resolver;
}

const MAX_RESPONSE_BYTES = 64 * 1024;
const MAX_ERROR_LENGTH = 300;

/**
 * The webhook queue's consumer: `fanout` jobs (user events from auth) become one `deliver` job
 * per webhook that wants them; a `deliver` job is one signed POST (Standard Webhooks headers,
 * the event id as `webhook-id` on every attempt). A 2xx answer delivers; anything else throws, so
 * the queue retries with backoff and, after the last attempt, keeps it as a dead letter.
 */
export function webhookJobHandler(opts: DeliveryOptions): (job: WebhookJob, attempt: JobAttempt) => Promise<void> {
  const { store, logger } = opts;
  return async (job, attempt) => {
    const project = job.project as ProjectId;
    if (job.kind === 'fanout') {
      await fanOut(store, opts.queue, project, job.event, await store.list(project), new Date().toISOString());
      return;
    }
    const hook = await store.get(project, job.webhook);
    // Deleted since: nothing to deliver to.
    if (!hook) return;
    const last = attempt.attempt >= attempt.attempts;
    const fail = async (lastStatus: number | null, message: string): Promise<never> => {
      const error = message.slice(0, MAX_ERROR_LENGTH);
      await store.recordAttempt(project, job.id, { status: last ? 'dead' : 'pending', last_status: lastStatus, last_error: error }, new Date().toISOString());
      if (last && (await store.countFailure(project, hook.id, opts.disableAfter, new Date().toISOString()))) {
        logger.warn({ project, webhook: hook.id }, 'webhook disabled after consecutive failed deliveries');
        opts.onDisabled?.(project, hook.id, hook.url);
      }
      throw new Error(error);
    };
    if (!hook.enabled) return fail(null, 'webhook disabled');
    const secret = opts.secrets.open(project, hook.id, hook.secret);
    if (!secret) return fail(null, 'signing secret unreadable (PLINTH_WEBHOOK_KEY changed?)');
    const body = webhookBody(job.event);
    const now = new Date();
    const headers = {
      'webhook-id': job.event.id,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(job.event.id, now, body),
    };
    let status: number;
    try {
      ({ status } = await sendWebhook(hook.url, headers, body, { policy: opts.policy, timeoutMs: opts.timeoutMs, maxResponseBytes: MAX_RESPONSE_BYTES, resolver: opts.resolver }));
    } catch (err) {
      return fail(null, err instanceof Error ? err.message : String(err));
    }
    if (status < 200 || status >= 300) return fail(status, `receiver answered ${status}`);
    await store.recordAttempt(project, job.id, { status: 'delivered', last_status: status, last_error: null }, new Date().toISOString());
  };
}
