import type { ChangeEvent, WebhookEvent, WebhookEventType } from '@plinth/shared';

const TYPE_OF: Partial<Record<ChangeEvent['kind'], WebhookEventType>> = {
  create: 'record.created',
  update: 'record.updated',
  delete: 'record.deleted',
};

/**
 * The webhook event of a committed record change, or null for changes webhooks do not carry
 * (collection changes). `id` must be stable for the change (the outbox position).
 */
export function recordWebhookEvent(change: ChangeEvent, id: string): WebhookEvent | null {
  const type = TYPE_OF[change.kind];
  if (!type || !change.record) return null;
  return {
    id,
    type,
    timestamp: new Date(change.committed_at).toISOString(),
    collection: change.collection,
    data: {
      project: change.project,
      collection: change.collection,
      record: change.record,
      ...(change.previous && change.kind === 'update' ? { previous: change.previous } : {}),
    },
  };
}

/** The body a receiver gets: the Standard Webhooks payload `{type, timestamp, data}`. */
export function webhookBody(event: WebhookEvent): string {
  return JSON.stringify({ type: event.type, timestamp: event.timestamp, data: event.data });
}
