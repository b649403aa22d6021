/**
 * A long receiver outage through the gateway (docs/webhooks.md "Retries, dead letters, replay"):
 * 1,000 changes made while the receiver is down are all delivered once it is back, each event id
 * exactly once. Standalone (the API suite runs in both topologies: webhooks-api.int.test.ts).
 *
 * Retry timing is scaled down: a 20 ms backoff base stands for the default 5 s (×250), so the
 * few seconds the receiver is down here are a 10-minute-or-more outage at production timing.
 */
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { startWebhookReceiver, TEST_WEBHOOK_ENV, type WebhookReceiver } from '@plinth/testing/webhook-receiver';
import { client, type Client } from './api/client';
import { deliveriesOf, poll } from './api/webhook-support';

let t: TestPlinth;
let api: Client;
let r: WebhookReceiver;


const deliveries = (hook: string, query = '') => deliveriesOf(api, hook, query);


beforeAll(async () => {
  t = await startTestPlinth({
    env: TEST_WEBHOOK_ENV,
  });
  api = client(t);
  await api.post('/collections', { name: 'wh_bulk', fields: { n: { type: 'integer' } }, rules: {} }).expect(201);
  r = await startWebhookReceiver();
}, 120_000);
afterAll(async () => {
  await r.close();
  await t.close();
});

it('1,000 changes made during an outage are all delivered after it, each event id exactly once', async () => {
  const hook = (await api.post('/webhooks', { url: r.url, events: ['record.created'], collections: ['wh_bulk'] }).expect(201)).body.webhook as { id: string };
  await r.down();
  for (let b = 0; b < 10; b++) {
    const operations = Array.from({ length: 100 }, (_, i) => ({ op: 'create', collection: 'wh_bulk', data: { n: b * 100 + i } }));
    await api.post('/batch', { operations }).expect(200);
  }
  // The outage lasts until every delivery has failed at least once (the newest are tried last).
  await poll(() => deliveries(hook.id, '?limit=200'), (ds) => ds.length === 200 && ds.every((d) => d.attempts >= 1), 60_000);
  expect((await deliveries(hook.id, '?status=pending&limit=200')).length).toBe(200);
  await r.up();
  await r.until((got) => new Set(got.map((g) => g.headers['webhook-id'])).size === 1000, 90_000);
  await poll(() => deliveries(hook.id, '?status=pending'), (ds) => ds.length === 0, 30_000);
  const ids = r.received.map((got) => got.headers['webhook-id']);
  expect(ids).toHaveLength(1000);
  expect(new Set(ids).size).toBe(1000);
  const ns = new Set(r.received.map((got) => (JSON.parse(got.body) as { data: { record: { n: number } } }).data.record.n));
  expect(ns.size).toBe(1000);
  expect(await deliveries(hook.id, '?status=dead')).toEqual([]);
}, 180_000);
