/**
 * Webhook dead letters through the gateway (docs/webhooks.md "Retries, dead letters, replay"):
 * a delivery that fails every attempt of its window is listed as dead, replayed on request with
 * the same event id, a run of dead deliveries disables the webhook; user events from auth reach
 * webhooks. The retry window is scaled down to a fraction of a second (5 attempts, 20 ms base).
 */
import { Webhook } from 'standardwebhooks';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { startWebhookReceiver, TEST_WEBHOOK_ENV, type WebhookReceiver } from '@plinth/testing/webhook-receiver';
import { client, type Client } from './client';
import { deliveriesOf, poll } from './webhook-support';

let t: TestPlinth;
let api: Client;
let r: WebhookReceiver;


const deliveries = (hook: string, query = '') => deliveriesOf(api, hook, query);


beforeAll(async () => {
  t = await startTestPlinth({
    env: {
      ...TEST_WEBHOOK_ENV,
      // 20, 40, 80, 160 ms apart: 5 attempts, then a dead letter.
      PLINTH_WEBHOOK_RETRY_WINDOW_MS: '300',
      PLINTH_WEBHOOK_DISABLE_AFTER: '3',
      PLINTH_OPERATOR_EMAIL: 'ops@example.com',
    },
  });
  api = client(t);
  await api.post('/collections', { name: 'dl_items', fields: { n: { type: 'integer' } }, rules: {} }).expect(201);
  await api.post('/collections', { name: 'dl_runs', fields: { n: { type: 'integer' } }, rules: {} }).expect(201);
  r = await startWebhookReceiver();
}, 120_000); // the cluster topology starts several processes: slow on a busy machine
afterAll(async () => {
  await r.close();
  await t.close();
});

it('a delivery refused on every attempt is listed dead; replay delivers it with the same event id', async () => {
  const hook = (await api.post('/webhooks', { url: r.url, events: ['record.created'], collections: ['dl_items'] }).expect(201)).body.webhook;
  r.answer(500);
  await api.post('/collections/dl_items/records', { data: { n: 1 } }).expect(201);
  const [dead] = await poll(() => deliveries(hook.id, '?status=dead'), (ds) => ds.length === 1);
  expect(dead).toMatchObject({ event_type: 'record.created', status: 'dead', attempts: 5, last_status: 500 });
  expect(r.received.filter((g) => g.headers['webhook-id'] === dead!.event_id)).toHaveLength(5);
  // Replaying anything but a dead letter, or another webhook's, is refused.
  await api.post(`/webhooks/${hook.id}/deliveries/d_nothing/replay`, {}).expect(404);
  r.answer(200);
  const replayed = await api.post(`/webhooks/${hook.id}/deliveries/${dead!.id}/replay`, {}).expect(202);
  expect(replayed.body.delivery).toMatchObject({ id: dead!.id, status: 'pending' });
  await poll(() => deliveries(hook.id), (ds) => ds[0]!.status === 'delivered');
  const ok = r.received.filter((g) => g.headers['webhook-id'] === dead!.event_id && g.status === 200);
  expect(ok).toHaveLength(1);
  expect(new Webhook(hook.secret).verify(ok[0]!.body, ok[0]!.headers)).toMatchObject({ type: 'record.created' });
  expect((await api.post(`/webhooks/${hook.id}/deliveries/${dead!.id}/replay`, {})).body).toMatchObject({ error: 'conflict' });
  await api.delete(`/webhooks/${hook.id}`).expect(200);
});

it('three dead deliveries in a row disable the webhook and mail the operator; it takes no new events until enabled again', async () => {
  const hook = (await api.post('/webhooks', { url: r.url, events: ['record.created'], collections: ['dl_runs'] }).expect(201)).body.webhook;
  r.answer(503);
  for (let i = 0; i < 3; i++) await api.post('/collections/dl_runs/records', { data: { n: i } }).expect(201);
  const disabled = await poll(async () => (await api.get(`/webhooks/${hook.id}`).expect(200)).body.webhook, (h) => h.enabled === false);
  expect(disabled).toMatchObject({ enabled: false, disabled_reason: 'consecutive_failures', consecutive_failures: 3 });
  expect(await deliveries(hook.id, '?status=dead')).toHaveLength(3);
  const [notice] = await poll(
    async () => (await api.get('/mailbox?to=ops@example.com').expect(200)).body.messages as Array<{ kind: string; subject: string; text: string }>,
    (ms) => ms.length > 0,
  );
  expect(notice).toMatchObject({ kind: 'webhook-disabled', subject: expect.stringContaining(t.project.id) });
  expect(notice!.text).toContain(hook.id);
  expect(notice!.text).toContain(r.url);
  r.answer(200);
  await api.post('/collections/dl_runs/records', { data: { n: 99 } }).expect(201);
  const dead = await deliveries(hook.id, '?status=dead');
  // A disabled webhook's dead letters wait: replay is refused until it is enabled.
  expect((await api.post(`/webhooks/${hook.id}/deliveries/${dead[0]!.id}/replay`, {})).status).toBe(409);
  await api.patch(`/webhooks/${hook.id}`, { enabled: true }).expect(200);
  await api.post(`/webhooks/${hook.id}/deliveries/${dead[0]!.id}/replay`, {}).expect(202);
  await poll(() => deliveries(hook.id, '?status=delivered'), (ds) => ds.length === 1);
  // The record made while it was disabled was never queued for it.
  expect((await deliveries(hook.id)).map((d) => d.status).sort()).toEqual(['dead', 'dead', 'delivered']);
  expect((await api.get(`/webhooks/${hook.id}`).expect(200)).body.webhook).toMatchObject({ enabled: true, consecutive_failures: 0 });
  await api.delete(`/webhooks/${hook.id}`).expect(200);
});

it('user.created and user.deleted come from auth, signed like record events', async () => {
  const hook = (await api.post('/webhooks', { url: r.url, events: ['user.created', 'user.deleted'] }).expect(201)).body.webhook;
  r.answer(200);
  await api.patch('/settings/auth', { enabled: true }).expect(200);
  const before = r.received.length;
  const user = (await api.post('/auth/users', { email: 'hooked@example.com', password: 'correct horse battery' }).expect(201)).body.user;
  await api.delete(`/auth/users/${user.id}`).expect(200);
  await r.until((got) => got.length >= before + 2);
  const verifier = new Webhook(hook.secret);
  const events = r.received.slice(before).map((g) => verifier.verify(g.body, g.headers) as { type: string; data: { user: { id: string; email: string } } });
  expect(events.map((e) => [e.type, e.data.user.id, e.data.user.email])).toEqual([
    ['user.created', user.id, 'hooked@example.com'],
    ['user.deleted', user.id, 'hooked@example.com'],
  ]);
  expect(JSON.stringify(events)).not.toMatch(/password_hash|correct horse/);
  await api.delete(`/webhooks/${hook.id}`).expect(200);
});
