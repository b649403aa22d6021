import type { Webhook } from '@plinth/protocol';
import {
  ConflictError,
  InvalidRequestError,
  newId,
  NotFoundError,
  WEBHOOK_EVENT_TYPES,
  type ProjectId,
  type WebhookEventType,
  type WebhookQueue,
} from '@plinth/shared';
import { newSigningSecret, type WebhookSecrets } from './webhook-secrets';
import { newStoredWebhook, type DeliveryStatus, type StoredWebhook, type WebhookChanges, type WebhookDelivery, type WebhookStore } from './webhook-store';
import type { TargetPolicy } from './webhook-target';

/** Webhooks per project. */
export const MAX_WEBHOOKS = 20;
const MAX_URL_LENGTH = 2048;
const MAX_COLLECTIONS = 100;
const COLLECTION_NAME = /^[a-z][a-z0-9_]{0,62}$/;
const DEFAULT_DELIVERIES = 50;
const MAX_DELIVERIES = 200;

/** A webhook as the API shows it (never its secret): the wire type. */
export type PublicWebhook = Webhook;

const shown = (h: StoredWebhook): PublicWebhook => ({
  id: h.id,
  url: h.url,
  events: h.events,
  collections: h.collections,
  enabled: h.enabled,
  disabled_reason: h.disabled_reason,
  consecutive_failures: h.consecutive_failures,
  created_at: h.created_at,
  updated_at: h.updated_at,
});

function asObject(body: unknown): { [key: string]: unknown } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new InvalidRequestError('The body must be a JSON object.');
  return body as { [key: string]: unknown };
}

/**
 * The webhook API's operations (docs/webhooks.md): checks every input, keeps secrets sealed,
 * and replays dead letters through the queue.
 */
export class WebhookAdmin {
  constructor(
    private readonly store: WebhookStore,
    private readonly queue: WebhookQueue,
    private readonly secrets: WebhookSecrets,
    private readonly policy: TargetPolicy,
  ) {}

  /** A webhook's url, checked against the target policy; 400 otherwise. */
  checkUrl(value: unknown): string {
    if (typeof value !== 'string' || value.length === 0 || value.length > MAX_URL_LENGTH) {
      throw new InvalidRequestError(`"url" must be a URL of at most ${MAX_URL_LENGTH} characters.`, { field: 'url' });
    }
    const problem = this.policy.urlProblem(value);
    if (problem) throw new InvalidRequestError(`"url": ${problem}.`, { field: 'url' });
    return value;
  }

  checkEvents(value: unknown): WebhookEventType[] {
    if (!Array.isArray(value) || value.length === 0 || value.some((e) => typeof e !== 'string' || !WEBHOOK_EVENT_TYPES.includes(e as WebhookEventType))) {
      throw new InvalidRequestError(`"events" must be a non-empty list of: ${WEBHOOK_EVENT_TYPES.join(', ')}.`, { field: 'events' });
    }
    return [...new Set(value as WebhookEventType[])];
  }

  checkCollections(value: unknown): string[] | null {
    if (value === null || value === undefined) return null;
    if (!Array.isArray(value) || value.length === 0 || value.length > MAX_COLLECTIONS || value.some((c) => typeof c !== 'string' || !COLLECTION_NAME.test(c))) {
      throw new InvalidRequestError(`"collections" must be null or a list of 1 to ${MAX_COLLECTIONS} collection names.`, { field: 'collections' });
    }
    return [...new Set(value as string[])];
  }

  private unknownFields(body: { [key: string]: unknown }, allowed: string[]): void {
    const extra = Object.keys(body).find((k) => !allowed.includes(k));
    if (extra) throw new InvalidRequestError(`Unknown field "${extra}".`, { field: extra });
  }

  /** Registers a webhook; the answer carries its signing secret, the only time it is shown. */
  async create(project: ProjectId, raw: unknown, now = new Date()): Promise<PublicWebhook & { secret: string }> {
    const body = asObject(raw);
    this.unknownFields(body, ['url', 'events', 'collections']);
    const url = this.checkUrl(body.url);
    const events = this.checkEvents(body.events);
    const collections = this.checkCollections(body.collections);
    if ((await this.store.count(project)) >= MAX_WEBHOOKS) throw new InvalidRequestError(`A project has at most ${MAX_WEBHOOKS} webhooks.`);
    const id = newId('wh_', now.getTime());
    const secret = newSigningSecret();
    const at = now.toISOString();
    const hook = newStoredWebhook({ id, project, url, events, collections, secret: this.secrets.seal(project, id, secret) }, at);
    await this.store.insert(hook);
    return { ...shown(hook), secret };
  }

  async list(project: ProjectId): Promise<PublicWebhook[]> {
    return (await this.store.list(project)).map(shown);
  }

  async get(project: ProjectId, id: string): Promise<PublicWebhook> {
    const hook = await this.store.get(project, id);
    if (!hook) throw new NotFoundError(`No webhook ${id}.`, { id });
    return shown(hook);
  }

  async update(project: ProjectId, id: string, raw: unknown): Promise<PublicWebhook> {
    const body = asObject(raw);
    this.unknownFields(body, ['url', 'events', 'collections', 'enabled']);
    const changes: WebhookChanges = {};
    if (body.url !== undefined) changes.url = this.checkUrl(body.url);
    if (body.events !== undefined) changes.events = this.checkEvents(body.events);
    if ('collections' in body) changes.collections = this.checkCollections(body.collections);
    if (body.enabled !== undefined) {
      if (typeof body.enabled !== 'boolean') throw new InvalidRequestError('"enabled" must be true or false.', { field: 'enabled' });
      changes.enabled = body.enabled;
    }
    const hook = await this.store.update(project, id, changes, new Date().toISOString());
    if (!hook) throw new NotFoundError(`No webhook ${id}.`, { id });
    return shown(hook);
  }

  async delete(project: ProjectId, id: string): Promise<void> {
    if (!(await this.store.delete(project, id))) throw new NotFoundError(`No webhook ${id}.`, { id });
  }

  async deliveries(project: ProjectId, id: string, query: { [key: string]: unknown }): Promise<WebhookDelivery[]> {
    await this.get(project, id);
    const status = query.status;
    if (status !== undefined && status !== 'pending' && status !== 'delivered' && status !== 'dead') {
      throw new InvalidRequestError('"status" must be pending, delivered or dead.', { field: 'status' });
    }
    const limit = query.limit === undefined ? DEFAULT_DELIVERIES : Number(query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_DELIVERIES) throw new InvalidRequestError(`"limit" must be 1 to ${MAX_DELIVERIES}.`, { field: 'limit' });
    return this.store.listDeliveries(project, id, { status: status as DeliveryStatus | undefined, limit });
  }

  /**
   * Sends a dead letter again, with a fresh run of attempts; the webhook must be enabled. A dead
   * letter the queue lost is enqueued again from the event its delivery row keeps.
   */
  async replay(project: ProjectId, id: string, deliveryId: string): Promise<WebhookDelivery> {
    const hook = await this.get(project, id);
    const delivery = await this.store.getDelivery(project, deliveryId);
    if (!delivery || delivery.webhook !== id) throw new NotFoundError(`No delivery ${deliveryId}.`, { id: deliveryId });
    if (delivery.status !== 'dead') throw new ConflictError('Only a dead delivery can be replayed.', { status: delivery.status });
    if (!hook.enabled) throw new ConflictError('The webhook is disabled: enable it (PATCH {"enabled": true}) first.');
    // Pending first: the replayed attempt may finish before retryFailed returns.
    await this.store.setStatus(project, deliveryId, 'pending', new Date().toISOString());
    try {
      await this.queue.retryFailed(project, deliveryId);
    } catch (err) {
      // The queue no longer holds the failed job (a Redis restarted empty): a new one from the stored event.
      const event = err instanceof NotFoundError ? await this.store.deliveryEvent(project, deliveryId) : null;
      if (!event) {
        await this.store.setStatus(project, deliveryId, 'dead', new Date().toISOString());
        throw err;
      }
      await this.queue.enqueue({ id: deliveryId, project, kind: 'deliver', webhook: id, event });
    }
    return (await this.store.getDelivery(project, deliveryId))!;
  }
}
