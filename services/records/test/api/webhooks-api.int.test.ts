/**
 * Webhooks through the gateway (docs/webhooks.md), with real HTTP receivers started here: the
 * API, signatures a receiver verifies with the `standardwebhooks` library, one delivery per event
 * id across a receiver outage, and no delivery to loopback, private or metadata addresses. Runs in
 * both topologies; the 1,000-change outage is services/records/test/webhook-outage.int.test.ts.
 *
 * Retry timing is scaled down: a 20 ms backoff base stands for the default 5 s (×250).
 */
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { startWebhookReceiver, TEST_WEBHOOK_ENV, type WebhookReceiver } from '@plinth/testing/webhook-receiver';
import { client, type Client } from './client';
import { deliveriesOf, poll } from './webhook-support';

let t: TestPlinth;
let api: Client;
const receivers: WebhookReceiver[] = [];

const receiver = async (): Promise<WebhookReceiver> => {
  const r = await startWebhookReceiver();
  receivers.push(r);
  return r;
};


const deliveries = (hook: string, query = '') => deliveriesOf(api, hook, query);


const register = async (body: object) => (await api.post('/webhooks', body).expect(201)).body.webhook as { id: string; secret: string; url: string };

beforeAll(async () => {
  t = await startTestPlinth({
    env: {
      // Receivers listen on 127.0.0.2: allowed as written; 127.0.0.1 and names resolving to it are not.
      ...TEST_WEBHOOK_ENV,
      PLINTH_WEBHOOK_TIMEOUT_MS: '3000',
    },
  });
  api = client(t);
  for (const name of ['wh_items', 'wh_other']) {
    await api.post('/collections', { name, fields: { n: { type: 'integer' }, label: { type: 'text' } }, rules: {} }).expect(201);
  }
}, 120_000); // the cluster topology starts several processes: slow on a busy machine
afterAll(async () => {
  for (const r of receivers) await r.close();
  await t.close();
});

it('registers with the secret key: 201 with the signing secret once; lists, reads, changes and deletes without it', async () => {
  const r = await receiver();
  const res = await api.post('/webhooks', { url: r.url, events: ['record.created', 'record.deleted'], collections: ['wh_other'] });
  expect(res.status).toBe(201);
  expect(res.body.webhook).toMatchObject({ id: expect.stringMatching(/^wh_/), url: r.url, events: ['record.created', 'record.deleted'], secret: expect.stringMatching(/^whsec_/) });
  const id = res.body.webhook.id;
  // Another project's secret key sees none of it.
  const other = await t.createProject();
  const asOther = (path: string) => request(t.app).get(`/v1/projects/${other.id}${path}`).set('Authorization', `Bearer ${other.secretKey}`);
  expect((await asOther('/webhooks').expect(200)).body.webhooks).toEqual([]);
  await asOther(`/webhooks/${id}`).expect(404);
  const listed = (await api.get('/webhooks').expect(200)).body.webhooks;
  expect(listed).toEqual(expect.arrayContaining([expect.objectContaining({ id, url: r.url, enabled: true, collections: ['wh_other'] })]));
  expect(JSON.stringify(listed)).not.toContain('whsec_');
  expect((await api.get(`/webhooks/${id}`).expect(200)).body.webhook).not.toHaveProperty('secret');
  const patched = await api.patch(`/webhooks/${id}`, { events: ['record.updated'], enabled: false }).expect(200);
  expect(patched.body.webhook).toMatchObject({ events: ['record.updated'], enabled: false });
  await api.delete(`/webhooks/${id}`).expect(200, { deleted: true, id });
  await api.get(`/webhooks/${id}`).expect(404);
  // The public key may not touch webhooks; bad input is a 400 naming the field.
  expect((await api.get('/webhooks', 'public')).status).toBe(403);
  expect((await api.post('/webhooks', { url: r.url, events: ['record.exploded'] })).body).toMatchObject({ error: 'invalid_request', details: { field: 'events' } });
  expect((await api.post('/webhooks', { url: r.url, events: ['record.created'], extra: 1 })).body).toMatchObject({ error: 'invalid_request', details: { field: 'extra' } });
});

it.each(['http://127.0.0.1:9/hook', 'http://10.0.0.1/hook', 'http://169.254.169.254/latest/meta-data', 'http://[::1]:9/', 'http://[::ffff:127.0.0.1]/', 'ftp://example.com/x', 'http://user:pw@example.com/'])(
  'refuses %s at registration: 400 invalid_request',
  async (url) => {
    const res = await api.post('/webhooks', { url, events: ['record.created'] });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_request', details: { field: 'url' } });
  },
);

it('a name resolving to loopback is refused when the delivery connects: the trap listening there gets nothing', async () => {
  const trap = await startWebhookReceiver('127.0.0.1');
  receivers.push(trap);
  const hook = await register({ url: `http://localhost:${trap.port}/hook`, events: ['record.created'], collections: ['wh_other'] });
  await api.post('/collections/wh_other/records', { data: { n: 1 } }).expect(201);
  const [d] = await poll(() => deliveries(hook.id), (ds) => ds.length === 1 && ds[0]!.attempts >= 2);
  expect(d!.status).toBe('pending');
  expect(d!.last_error).toMatch(/localhost resolves to .*may not reach/);
  expect(trap.received).toHaveLength(0);
  await api.delete(`/webhooks/${hook.id}`).expect(200);
});

it('each delivery carries Standard Webhooks headers that Webhook.verify accepts with the secret', async () => {
  const r = await receiver();
  const hook = await register({ url: r.url, events: ['record.created', 'record.updated'], collections: ['wh_items'] });
  const rec = (await api.post('/collections/wh_items/records', { data: { n: 1, label: 'first' } }).expect(201)).body.record;
  await api.patch(`/collections/wh_items/records/${rec.id}`, { data: { n: 2 } }).expect(200);
  await r.until((got) => got.length >= 2);
  const verifier = new Webhook(hook.secret);
  const payloads = r.received.map((got) => verifier.verify(got.body, got.headers) as { type: string; data: { record: { id: string; n: number } } });
  // Deliveries run several at once (docs/webhooks.md): they may arrive in either order.
  expect(payloads.map((p) => [p.type, p.data.record.id, p.data.record.n]).sort((a, b) => Number(a[2]) - Number(b[2]))).toEqual([
    ['record.created', rec.id, 1],
    ['record.updated', rec.id, 2],
  ]);
  expect(r.received[0]!.headers['webhook-id']).toMatch(/^evt_/);
  // A body changed on the way, or another secret, does not verify.
  expect(() => verifier.verify(r.received[0]!.body.replace('first', 'forged'), r.received[0]!.headers)).toThrow();
  expect(() => new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(r.received[0]!.body, r.received[0]!.headers)).toThrow();
  await api.delete(`/webhooks/${hook.id}`).expect(200);
});

it('a receiver that is down gets every event once it is back: one successful delivery per event id', async () => {
  const r = await receiver();
  const hook = await register({ url: r.url, events: ['record.created'], collections: ['wh_items'] });
  await r.down();
  for (let i = 0; i < 5; i++) await api.post('/collections/wh_items/records', { data: { n: i } }).expect(201);
  // Every delivery has failed at least twice (connection refused) before the receiver returns.
  await poll(() => deliveries(hook.id), (ds) => ds.length === 5 && ds.every((d) => d.attempts >= 2));
  await r.up();
  const done = await poll(() => deliveries(hook.id), (ds) => ds.every((d) => d.status === 'delivered'));
  const ids = r.received.map((got) => got.headers['webhook-id']);
  expect(new Set(ids).size).toBe(5);
  expect(ids).toHaveLength(5);
  expect(new Set(done.map((d) => d.event_id))).toEqual(new Set(ids));
  await api.delete(`/webhooks/${hook.id}`).expect(200);
});
