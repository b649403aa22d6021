import type { ProjectId, WebhookEvent, WebhookEventType } from '@plinth/shared';
import type { DeliveryStatus, WebhookDelivery } from '@plinth/protocol';

/**
 * The data version of the webhook store (webhooks, deliveries, the dispatch lease): a component
 * of its own, in webhooks.db or beside the records in MongoDB (docs/operators.md "Upgrades and rollback").
 */
export const WEBHOOKS_COMPONENT = 'webhooks';

/** A webhook as stored; `secret` is the sealed signing secret (webhook-secrets.ts). */
export interface StoredWebhook {
  id: string;
  project: ProjectId;
  url: string;
  events: WebhookEventType[];
  /** Record events only from these collections; null: every collection. */
  collections: string[] | null;
  secret: string;
  enabled: boolean;
  /** Why it was disabled (`consecutive_failures`), or null. */
  disabled_reason: string | null;
  /** Deliveries dead-lettered in a row, since the last success. */
  consecutive_failures: number;
  created_at: string;
  updated_at: string;
  /**
   * When it was created or last enabled (ISO): it takes the changes committed from then on, so a
   * change committed while it was disabled is not delivered when the dispatcher reads it later.
   */
  enabled_at: string;
}

/** A webhook as registered at `at` (ISO): enabled, no failures, created, updated and enabled then. */
export function newStoredWebhook(fields: Pick<StoredWebhook, 'id' | 'project' | 'url' | 'events' | 'collections' | 'secret'>, at: string): StoredWebhook {
  return { ...fields, enabled: true, disabled_reason: null, consecutive_failures: 0, created_at: at, updated_at: at, enabled_at: at };
}

/** Delivery states and one event on its way to one webhook: the wire types. */
export type { DeliveryStatus, WebhookDelivery } from '@plinth/protocol';

/**
 * A pending delivery with the event it carries: what re-enqueues its job when the queue lost it
 * (a Redis restarted empty). Deliveries stored before the event was kept have none and are not listed.
 */
export interface PendingDelivery {
  project: ProjectId;
  id: string;
  webhook: string;
  event: WebhookEvent;
  updated_at: string;
}

/** What changes on a webhook (PATCH). */
export interface WebhookChanges {
  url?: string;
  events?: WebhookEventType[];
  collections?: string[] | null;
  enabled?: boolean;
}

/**
 * Webhooks and their deliveries: webhooks.db standalone (sqlite-webhook-store.ts), the records'
 * MongoDB database with MONGO_URL (mongo-webhook-store.ts). Every method is scoped by project; a
 * webhook of another project is never returned, changed or deleted.
 */
export interface WebhookStore {
  /** Stores a new webhook. */
  insert(hook: StoredWebhook): Promise<void>;
  /** The project's webhooks, oldest first. */
  list(project: ProjectId): Promise<StoredWebhook[]>;
  /** Whether any project has a webhook at all (the dispatcher skips reading changes while none has). */
  any(): Promise<boolean>;
  /** How many webhooks the project has. */
  count(project: ProjectId): Promise<number>;
  /** The webhook, or null when absent. */
  get(project: ProjectId, id: string): Promise<StoredWebhook | null>;
  /** Applies the changes; enabling resets the failure run and sets `enabled_at` to `now`. Null when absent. */
  update(project: ProjectId, id: string, changes: WebhookChanges, now: string): Promise<StoredWebhook | null>;
  /** Deletes the webhook and its deliveries; false when absent. */
  delete(project: ProjectId, id: string): Promise<boolean>;
  /**
   * Records a delivery as pending, with the event it carries; an existing one (same id) is left as
   * it is. Answers the delivery's status after the call: `pending` for a new one, and an existing
   * one's own (a delivered or dead one is not sent again when its event is fanned out again).
   */
  addDelivery(project: ProjectId, d: Pick<WebhookDelivery, 'id' | 'webhook' | 'event_id' | 'event_type'>, now: string, event?: WebhookEvent): Promise<DeliveryStatus>;
  /**
   * Pending deliveries that carry their event, every project, ordered by (updated_at, project,
   * id), at most `limit`; with `after` (the last of the previous page) the ones that follow it.
   */
  pendingDeliveries(limit: number, after?: PendingDelivery): Promise<PendingDelivery[]>;
  /** The event a delivery carries; null when absent or stored before events were kept. */
  deliveryEvent(project: ProjectId, id: string): Promise<WebhookEvent | null>;
  /** The webhook's deliveries, newest first, optionally only those with `status`. */
  listDeliveries(project: ProjectId, webhook: string, opts: { status?: DeliveryStatus; limit: number }): Promise<WebhookDelivery[]>;
  /** The delivery, or null. */
  getDelivery(project: ProjectId, id: string): Promise<WebhookDelivery | null>;
  /** Sets a delivery's status (replay: dead → pending). */
  setStatus(project: ProjectId, id: string, status: DeliveryStatus, now: string): Promise<void>;
  /** An attempt's outcome (adds one to its attempts): delivered (resets the webhook's failure run), still pending, or dead. */
  recordAttempt(project: ProjectId, id: string, outcome: { status: DeliveryStatus; last_status: number | null; last_error: string | null }, now: string): Promise<void>;
  /**
   * A delivery went dead: adds one to the webhook's failure run and disables it when the run
   * reaches `disableAfter`. Returns true when this call disabled it.
   */
  countFailure(project: ProjectId, webhook: string, disableAfter: number, now: string): Promise<boolean>;
  /** Deletes every webhook and delivery of the project. */
  purgeProject(project: ProjectId): Promise<void>;
  /**
   * A lease for one dispatcher among replicas: true when `holder` holds it until `now + ttlMs`
   * (taken when free or lapsed, renewed when already its own).
   */
  acquireLease(name: string, holder: string, now: number, ttlMs: number): Promise<boolean>;
  /** Deletes delivered deliveries last changed before `before` (ISO). */
  pruneDelivered(before: string, limit: number): Promise<number>;
}
