/**
 * `npm start` stopped and started again on the same data directory keeps what it sealed: the
 * internal secret (which signs internal calls and file tokens, and from which the keys sealing
 * webhook signing secrets and TOTP secrets derive) is kept in credentials.json, not drawn anew at
 * each start. A webhook made before the restart still delivers, signed with the secret it was
 * shown with; an operator who enrolled a second factor before the restart signs in with a code
 * after it — and gateway.db never holds that TOTP secret in clear.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Webhook } from 'standardwebhooks';
import { operatorTotpCode } from '../src/operators/totp';
import { freshRequest, startStandalone, stopStandalone, type StandaloneProcess } from '@plinth/testing/standalone-process';
import { startWebhookReceiver, type WebhookReceiver } from '@plinth/testing/webhook-receiver';

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

it('an operator enrolled before a restart signs in with a code after it; gateway.db holds the TOTP secret only sealed', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-restart-ops-'));
  let ops: StandaloneProcess | undefined;
  try {
    ops = await startStandalone(dir);
    const boot = { Authorization: `Bearer ${ops.operatorKey}` };
    const password = 'restart suite operator password';
    expect((await freshRequest(`${ops.url}/v1/admin/operators`, { method: 'POST', headers: boot, body: { email: 'mfa@restart.example', password, role: 'owner' } })).status).toBe(201);
    const signIn = async (code?: string) => freshRequest(`${ops!.url}/v1/admin/sessions`, { method: 'POST', body: { email: 'mfa@restart.example', password, ...(code ? { code } : {}) } });
    const token = ((await signIn()).body as { token: string }).token;
    const as = { Authorization: `Bearer ${token}` };
    const enrol = await freshRequest(`${ops.url}/v1/admin/me/totp`, { method: 'POST', headers: as });
    expect(enrol.status).toBe(201);
    const secret = (enrol.body as { secret: string }).secret;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const gatewayDb = path.join(dir, 'gateway.db');
    const columns = () => {
      const db = new Database(gatewayDb, { readonly: true });
      try {
        return db.prepare('SELECT totp_secret, totp_pending FROM operators').get() as { totp_secret: string | null; totp_pending: string | null };
      } finally {
        db.close();
      }
    };
    // Handed out, not confirmed yet: sealed already.
    expect(columns().totp_pending).toMatch(/^[A-Za-z0-9_-]{60,}$/);
    expect(columns().totp_pending).not.toContain(secret);
    expect((await freshRequest(`${ops.url}/v1/admin/me/totp/confirm`, { method: 'POST', headers: as, body: { code: operatorTotpCode(secret) } })).status).toBe(200);
    expect(columns()).toEqual({ totp_secret: expect.stringMatching(/^[A-Za-z0-9_-]{60,}$/), totp_pending: null });
    await stopStandalone(ops);
    // The whole file (its WAL is folded in at the stop), not only the column: nowhere in clear.
    for (const f of fs.readdirSync(dir).filter((n) => n.startsWith('gateway.db'))) {
      expect(fs.readFileSync(path.join(dir, f)).includes(Buffer.from(secret))).toBe(false);
    }

    ops = await startStandalone(dir);
    expect((await signIn()).status).toBe(401);
    expect((await signIn(operatorTotpCode(secret, Date.now() + 30_000))).status).toBe(201);
  } finally {
    if (ops) await stopStandalone(ops);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 90_000);
