import type { WebhookEventType } from '@plinth/protocol';
import { isProjectId } from '../types';
import { JOB_ID_PATTERN } from '../mail-queue/job-queue';

/**
 * The name of the queue webhook jobs travel on (BullMQ queue name; the embedded outbox uses the
 * `webhook_outbox` table). RENAMING IT STRANDS QUEUED JOBS: deliveries waiting or retrying under
 * the old name are never sent and their dead letters disappear from the API.
 */
export const WEBHOOK_QUEUE_NAME = 'plinth-webhooks';

/** The events a webhook can subscribe to (docs/webhooks.md): the wire type. */
export type { WebhookEventType };

export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = ['record.created', 'record.updated', 'record.deleted', 'user.created', 'user.deleted'];

/**
 * One change, as a receiver sees it: the body of every delivery is `{type, timestamp, data}`
 * (the Standard Webhooks payload shape); `id` is the `webhook-id` header, the same for every
 * retry and every webhook the change goes to.
 */
export interface WebhookEvent {
  /** `evt_…`: unique per change; a receiver de-duplicates by it. */
  id: string;
  type: WebhookEventType;
  /** ISO 8601, when the change committed. */
  timestamp: string;
  /** Record events: the collection (webhooks may filter by it). */
  collection?: string;
  /** `{project, collection, record, previous?}` for record events, `{project, user}` for user events. */
  data: { [key: string]: unknown };
}

/**
 * A job of the webhook queue. THIS SHAPE IS A WIRE FORMAT (jobs live in Redis or the outbox
 * across a deploy): fields may only be added as optional.
 * - `fanout`: an event produced outside records (auth's user events); the consumer enqueues one
 *   `deliver` job per matching webhook.
 * - `deliver`: one event to one webhook; retried with backoff, then a dead letter.
 */
export type WebhookJob =
  | { id: string; project: string; kind: 'fanout'; event: WebhookEvent }
  | { id: string; project: string; kind: 'deliver'; webhook: string; event: WebhookEvent };

/** The id of the job delivering `eventId` to `webhookId`: enqueueing it twice delivers once. */
export function deliveryJobId(webhookId: string, eventId: string): string {
  return `d_${webhookId}_${eventId}`;
}

function eventProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null) return '"event" must be an object';
  const e = value as { [key: string]: unknown };
  if (typeof e.id !== 'string' || !/^evt_[A-Za-z0-9_-]{1,80}$/.test(e.id)) return '"event.id" must be an evt_ id';
  if (typeof e.type !== 'string' || !WEBHOOK_EVENT_TYPES.includes(e.type as WebhookEventType)) return '"event.type" must be a webhook event type';
  if (typeof e.timestamp !== 'string' || Number.isNaN(Date.parse(e.timestamp))) return '"event.timestamp" must be an ISO 8601 timestamp';
  if (e.collection !== undefined && typeof e.collection !== 'string') return '"event.collection" must be a string';
  if (typeof e.data !== 'object' || e.data === null) return '"event.data" must be an object';
  return null;
}

/** Why `value` is not a WebhookJob, naming the field; null when it is one. */
export function webhookJobProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null) return 'a webhook job must be an object';
  const job = value as { [key: string]: unknown };
  if (typeof job.id !== 'string' || !JOB_ID_PATTERN.test(job.id)) return '"id" must match ' + String(JOB_ID_PATTERN);
  if (!isProjectId(job.project)) return '"project" must be a project id';
  if (job.kind !== 'fanout' && job.kind !== 'deliver') return '"kind" must be fanout or deliver';
  if (job.kind === 'deliver' && (typeof job.webhook !== 'string' || job.webhook.length === 0)) return '"webhook" must be a webhook id';
  return eventProblem(job.event);
}

/** Throws a TypeError naming the bad field unless `value` is a well-formed WebhookJob. */
export function assertWebhookJob(value: unknown): asserts value is WebhookJob {
  const problem = webhookJobProblem(value);
  if (problem) throw new TypeError(`Invalid webhook job: ${problem}.`);
}
