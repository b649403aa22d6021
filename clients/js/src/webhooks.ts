/** Webhooks through `@plinth/client/admin` (secret key): register, list, deliveries, replay. */
import type { Webhook, WebhookDelivery, WebhookEventType } from '@plinth/protocol';
import type { CallOptions, Transport } from './transport';

export type { WebhookDelivery, WebhookEventType } from '@plinth/protocol';
/** A webhook as the API shows it (never its secret). */
export type WebhookInfo = Webhook;

export interface NewWebhook {
  url: string;
  events: WebhookEventType[];
  collections?: string[] | null;
}

export interface WebhooksAdmin {
  /** Registers a webhook; the answer's `secret` (`whsec_…`) is shown this once: keep it. */
  create(hook: NewWebhook, opts?: CallOptions): Promise<WebhookInfo & { secret: string }>;
  list(opts?: CallOptions): Promise<WebhookInfo[]>;
  get(id: string, opts?: CallOptions): Promise<WebhookInfo>;
  /** `enabled: true` re-enables a webhook disabled for its failures. */
  update(id: string, change: Partial<NewWebhook> & { enabled?: boolean }, opts?: CallOptions): Promise<WebhookInfo>;
  delete(id: string, opts?: CallOptions): Promise<void>;
  /** Newest first; `status: 'dead'` lists the dead letters. */
  deliveries(id: string, query?: { status?: WebhookDelivery['status']; limit?: number }, opts?: CallOptions): Promise<WebhookDelivery[]>;
  /** Sends a dead letter again with a fresh run of attempts. */
  replay(id: string, deliveryId: string, opts?: CallOptions): Promise<WebhookDelivery>;
}

export function webhooksAdmin(t: Transport): WebhooksAdmin {
  const w = (id: string) => `/webhooks/${encodeURIComponent(id)}`;
  return {
    create: async (hook, o = {}) => (await t.request<{ webhook: WebhookInfo & { secret: string } }>({ method: 'POST', path: '/webhooks', body: hook, signal: o.signal })).webhook,
    list: async (o = {}) => (await t.request<{ webhooks: WebhookInfo[] }>({ method: 'GET', path: '/webhooks', signal: o.signal })).webhooks,
    get: async (id, o = {}) => (await t.request<{ webhook: WebhookInfo }>({ method: 'GET', path: w(id), signal: o.signal })).webhook,
    update: async (id, change, o = {}) => (await t.request<{ webhook: WebhookInfo }>({ method: 'PATCH', path: w(id), body: change, signal: o.signal })).webhook,
    delete: async (id, o = {}) => void (await t.request({ method: 'DELETE', path: w(id), signal: o.signal })),
    deliveries: async (id, query = {}, o = {}) =>
      (await t.request<{ deliveries: WebhookDelivery[] }>({ method: 'GET', path: `${w(id)}/deliveries`, query, signal: o.signal })).deliveries,
    replay: async (id, deliveryId, o = {}) =>
      (await t.request<{ delivery: WebhookDelivery }>({ method: 'POST', path: `${w(id)}/deliveries/${encodeURIComponent(deliveryId)}/replay`, signal: o.signal })).delivery,
  };
}
