/** What the webhook suites share: a webhook's deliveries as the API lists them, and waiting on them. */
import type { WebhookDelivery } from '@plinth/protocol';
import { waitFor } from '@plinth/shared/testing/wait-for';
import type { Client } from './client';

/** `GET …/webhooks/{hook}/deliveries{query}` (newest first). */
export async function deliveriesOf(api: Client, hook: string, query = ''): Promise<WebhookDelivery[]> {
  return (await api.get(`/webhooks/${hook}/deliveries${query}`).expect(200)).body.deliveries as WebhookDelivery[];
}

/** `fn()` again every 50 ms until `done` holds of its answer; that answer. */
export async function poll<T>(fn: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 30_000): Promise<T> {
  let last: T | undefined;
  const hit = await waitFor(
    'a webhook condition',
    async () => {
      last = await fn();
      return done(last) ? { value: last } : undefined;
    },
    { timeoutMs, intervalMs: 50 },
  ).catch((err: Error) => {
    throw new Error(`${err.message} Last answer: ${JSON.stringify(last).slice(0, 500)}`);
  });
  return hit.value;
}
