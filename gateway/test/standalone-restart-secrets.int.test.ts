/**
 * `npm start` stopped and started again on the same data directory keeps what it sealed: the
 * internal secret (which signs internal calls and file tokens, and from which the keys sealing
 * webhook signing secrets and TOTP secrets derive) is kept in credentials.json, not drawn anew at
 * each start. A webhook made before the restart still delivers, signed with the secret it was
 * shown with.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { freshRequest, startStandalone, stopStandalone, type StandaloneProcess } from '../src/testing/standalone-process';
import { startWebhookReceiver, type WebhookReceiver } from '../src/testing/webhook-receiver';

const ENV = { PLINTH_WEBHOOK_ALLOW_HOSTS: '127.0.0.2', PLINTH_WEBHOOK_DISPATCH_MS: '50' };
let dataDir: string;
let s: StandaloneProcess | undefined;
let r: WebhookReceiver;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-restart-'));
  r = await startWebhookReceiver();
});
afterAll(async () => {
  if (s) await stopStandalone(s);
  await r.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

it('a webhook made before a restart delivers after it, signed with the secret it was shown with', async () => {
  s = await startStandalone(dataDir, ENV);
  const headers = { Authorization: `Bearer ${s.secretKey}` };
  const api = `${s.url}/v1/projects/demo`;
  expect((await freshRequest(`${api}/collections`, { method: 'POST', headers, body: { name: 'orders', fields: { total: { type: 'number' } } } })).status).toBe(201);
  const made = await freshRequest(`${api}/webhooks`, { method: 'POST', headers, body: { url: r.url, events: ['record.created'] } });
  expect(made.status).toBe(201);
  const secret = (made.body as { webhook: { secret: string } }).webhook.secret;
  const stored = JSON.parse(fs.readFileSync(path.join(dataDir, 'credentials.json'), 'utf8')) as { internal_secret?: string };
  expect(stored.internal_secret).toMatch(/^[A-Za-z0-9_-]{40,}$/);
  await stopStandalone(s);

  s = await startStandalone(dataDir, ENV);
  const created = await freshRequest(`${s.url}/v1/projects/demo/collections/orders/records`, { method: 'POST', headers, body: { data: { total: 42 } } });
  expect(created.status).toBe(201);
  await r.until((got) => got.length >= 1, 15_000);
  const payload = new Webhook(secret).verify(r.received[0]!.body, r.received[0]!.headers) as { type: string; data: { record: { total: number } } };
  expect(payload).toMatchObject({ type: 'record.created', data: { record: { total: 42 } } });
}, 90_000);
