/** The events a webhook can subscribe to (docs/webhooks.md). */
export type WebhookEventType = 'record.created' | 'record.updated' | 'record.deleted' | 'user.created' | 'user.deleted';

/** A webhook as the API shows it: never its signing secret (shown once, in the creation's answer). */
export interface Webhook {
  id: string;
  url: string;
  events: WebhookEventType[];
  /** Record events only from these collections; null: all. */
  collections: string[] | null;
  enabled: boolean;
  /** `consecutive_failures` when Plinth disabled it, else null. */
  disabled_reason: string | null;
  /** Deliveries dead-lettered in a row, since the last success. */
  consecutive_failures: number;
  created_at: string;
  updated_at: string;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'dead';

/** One event on its way to one webhook. */
export interface WebhookDelivery {
  /** The queue job's id (also what replay takes). */
  id: string;
  webhook: string;
  /** The `webhook-id` header: the same on every attempt and replay. */
  event_id: string;
  event_type: WebhookEventType;
  status: DeliveryStatus;
  attempts: number;
  /** The receiver's last HTTP status, or null when it never answered. */
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}
