/**
 * `npm start` with PLINTH_WORKERS=2: two worker processes on one port and one data directory.
 * Every request here goes on a fresh connection, which the primary hands to the workers in
 * turn, and each test checks that both workers answered (X-Plinth-Worker). What one worker
 * learns — a revoked key, a deleted project, a signed-out user, a rate-limit hit, an
 * idempotency key, a session, a queued mail — must hold on the other at once.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RtClient } from '../../services/realtime/test/support/rt-client';
import { freshRequest, startStandalone, stopStandalone, type FreshResponse, type StandaloneProcess } from '@plinth/testing/standalone-process';

let s: StandaloneProcess;
let dataDir: string;
const RATE_LIMIT_EMAIL = 5;
const RATE_LIMIT_USER = 6;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-workers-'));
  s = await startStandalone(dataDir, {
    PLINTH_WORKERS: '2',
    PLINTH_BCRYPT_COST: '4',
    PLINTH_RATE_LIMIT_IP: '100000',
    PLINTH_RATE_LIMIT_EMAIL: String(RATE_LIMIT_EMAIL),
    PLINTH_MAIL_POLL_MS: '50',
    PLINTH_RATE_LIMIT_USER: String(RATE_LIMIT_USER),
  });
  const enabled = await freshRequest(`${s.url}/v1/projects/demo/settings/auth`, {
    method: 'PATCH',
    headers: { Authorization: `Bearer ${s.secretKey}` },
    body: { enabled: true, send_verification_on_signup: false },
  });
  expect(enabled.status).toBe(200);
}, 60_000);

afterAll(async () => {
  if (s) await stopStandalone(s);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const api = (p: string) => `${s.url}/v1/projects/demo${p}`;
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

/** `n` requests one after another, each on a new connection; answers and the set of workers seen. */
async function series(n: number, make: (i: number) => Promise<FreshResponse>): Promise<{ answers: FreshResponse[]; workers: Set<string> }> {
  const answers: FreshResponse[] = [];
  for (let i = 0; i < n; i++) answers.push(await make(i));
  return { answers, workers: new Set(answers.map((a) => a.worker ?? '?')) };
}

async function createKey(project: string, kind: 'public' | 'secret'): Promise<{ id: string; key: string }> {
  const res = await freshRequest(`${s.url}/v1/admin/projects/${project}/keys`, { method: 'POST', headers: bearer(s.operatorKey), body: { kind } });
  expect(res.status).toBe(201);
  const body = res.body as { key: { id: string; value: string } };
  return { id: body.key.id, key: body.key.value };
}

it('answers from both workers, and the banner says how many run', async () => {
  const { answers, workers } = await series(4, () => freshRequest(api('/collections'), { headers: bearer(s.publicKey) }));
  expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
  expect(workers).toEqual(new Set(['1', '2']));
  expect(s.output()).toMatch(/workers:\s+2/);
});

it('a revoked key stops working on every worker at once (each had it cached)', async () => {
  const { id, key } = await createKey('demo', 'public');
  const warm = await series(4, () => freshRequest(api('/collections'), { headers: bearer(key) }));
  expect(warm.answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
  expect(warm.workers.size).toBe(2);

  const revoked = await freshRequest(`${s.url}/v1/admin/projects/demo/keys/${id}`, { method: 'DELETE', headers: bearer(s.operatorKey) });
  expect(revoked.status).toBe(200);
  const after = await series(4, () => freshRequest(api('/collections'), { headers: bearer(key) }));
  expect(after.answers.map((a) => a.status)).toEqual([401, 401, 401, 401]);
  expect(after.workers.size).toBe(2);
});

it('a deleted project is gone on every worker at once', async () => {
  const created = await freshRequest(`${s.url}/v1/admin/projects`, { method: 'POST', headers: bearer(s.operatorKey), body: { id: 'doomed' } });
  expect(created.status).toBe(201);
  const key = (created.body as { keys: { public: string } }).keys.public;
  const url = `${s.url}/v1/projects/doomed/collections`;
  const warm = await series(4, () => freshRequest(url, { headers: bearer(key) }));
  expect(warm.answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
  expect(warm.workers.size).toBe(2);

  expect((await freshRequest(`${s.url}/v1/admin/projects/doomed`, { method: 'DELETE', headers: bearer(s.operatorKey) })).status).toBe(200);
  const after = await series(4, () => freshRequest(url, { headers: bearer(key) }));
  expect(after.answers.map((a) => a.status)).toEqual([401, 401, 401, 401]);
  expect(after.workers.size).toBe(2);
});

async function signUp(email: string): Promise<{ access: string; refresh: string }> {
  const res = await freshRequest(api('/auth/signup'), { method: 'POST', headers: bearer(s.publicKey), body: { email, password: 'correct horse battery' } });
  expect(res.status).toBe(201);
  const body = res.body as { access_token: string; refresh_token: string };
  return { access: body.access_token, refresh: body.refresh_token };
}

it('sign-out-all on one worker: records and auth on every worker refuse the token', async () => {
  const col = await freshRequest(api('/collections'), {
    method: 'POST',
    headers: bearer(s.secretKey),
    body: { name: 'wk_notes', fields: { body: { type: 'text' } }, rules: { read: 'auth != null' } },
  });
  expect(col.status).toBe(201);
  const { access } = await signUp('revoked@workers.example');
  const records = () => freshRequest(api('/collections/wk_notes/records'), { headers: { ...bearer(s.publicKey), 'X-Db-User-Token': access } });
  const me = () => freshRequest(api('/auth/user'), { headers: { ...bearer(s.publicKey), 'X-Auth-User-Token': access } });
  const before = await series(4, (i) => (i % 2 ? me() : records()));
  expect(before.answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);

  const out = await freshRequest(api('/auth/signout-all'), { method: 'POST', headers: { ...bearer(s.publicKey), 'X-Auth-User-Token': access } });
  expect(out.status).toBe(200);
  // Records on both workers (fresh connections alternate), then auth on both.
  const after = await series(8, (i) => (i < 4 ? records() : me()));
  expect(after.answers.map((a) => a.status)).toEqual(Array(8).fill(401));
  expect(new Set(after.answers.slice(0, 4).map((a) => a.worker)).size).toBe(2);
});

it('the per-e-mail sign-in limit counts the attempts made on both workers together', async () => {
  await signUp('limited@workers.example');
  const attempts = await series(RATE_LIMIT_EMAIL + 2, () =>
    freshRequest(api('/auth/signin'), { method: 'POST', headers: bearer(s.publicKey), body: { email: 'limited@workers.example', password: 'wrong password!' } }),
  );
  expect(attempts.answers.map((a) => a.status)).toEqual([...Array(RATE_LIMIT_EMAIL).fill(401), 429, 429]);
  expect(attempts.workers.size).toBe(2);
});

it('the per-user record rate limit counts the requests made on both workers together', async () => {
  const { access } = await signUp('reader@workers.example');
  const reads = await series(RATE_LIMIT_USER + 2, () =>
    freshRequest(api('/collections/wk_notes/records'), { headers: { ...bearer(s.publicKey), 'X-Db-User-Token': access } }),
  );
  expect(reads.answers.map((a) => a.status)).toEqual([...Array(RATE_LIMIT_USER).fill(200), 429, 429]);
  expect(reads.workers.size).toBe(2);
});

it('an Idempotency-Key replays the same record whichever worker the retry reaches', async () => {
  expect((await freshRequest(api('/collections'), { method: 'POST', headers: bearer(s.secretKey), body: { name: 'wk_orders', fields: { n: { type: 'number' } } } })).status).toBe(201);
  const create = () =>
    freshRequest(api('/collections/wk_orders/records'), { method: 'POST', headers: { ...bearer(s.secretKey), 'Idempotency-Key': 'order-1' }, body: { data: { n: 1 } } });
  const tries = await series(4, create);
  expect(tries.answers.map((a) => a.status)).toEqual([201, 201, 201, 201]);
  const ids = new Set(tries.answers.map((a) => (a.body as { record: { id: string } }).record.id));
  expect(ids.size).toBe(1);
  expect(tries.workers.size).toBe(2);
  const list = await freshRequest(api('/collections/wk_orders/records'), { headers: bearer(s.secretKey) });
  expect((list.body as { records: unknown[] }).records).toHaveLength(1);
});

it('a session signed in on one worker refreshes on the other; a spent refresh token is refused on both', async () => {
  const { refresh } = await signUp('session@workers.example');
  const refreshWith = (token: string) =>
    freshRequest(api('/auth/refresh'), { method: 'POST', headers: bearer(s.publicKey), body: { refresh_token: token } });
  const first = await refreshWith(refresh);
  expect(first.status).toBe(200);
  const next = (first.body as { refresh_token: string }).refresh_token;
  const second = await refreshWith(next);
  expect(second.status).toBe(200);
  expect(second.worker).not.toBe(first.worker);
  // The first refresh token is two rotations old: presenting it is reuse, which ends the session.
  const reused = await series(2, () => refreshWith(refresh));
  expect(reused.answers.map((a) => a.status)).toEqual([401, 401]);
});

it('mails queued on both workers are each delivered exactly once', async () => {
  const emails = ['m1', 'm2', 'm3', 'm4'].map((m) => `${m}@workers.example`);
  for (const e of emails) await signUp(e);
  const asked = await series(emails.length, (i) =>
    freshRequest(api('/auth/password/forgot'), { method: 'POST', headers: bearer(s.publicKey), body: { email: emails[i] } }),
  );
  expect(asked.answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
  expect(asked.workers.size).toBe(2);
  const resetMails = async () => {
    const box = await freshRequest(api('/mailbox?limit=1000'), { headers: bearer(s.secretKey) });
    return (box.body as { messages: Array<{ to: string; kind: string }> }).messages.filter((m) => m.kind === 'reset' && emails.includes(m.to));
  };
  const deadline = Date.now() + 15_000;
  while ((await resetMails()).length < emails.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  // Several more poll intervals: a second consumer would have delivered some of them again.
  await new Promise((r) => setTimeout(r, 500));
  const mails = await resetMails();
  expect(mails.map((m) => m.to).sort()).toEqual([...emails].sort());
});

it('under concurrent idempotent creates and sign-ins on both workers, nothing fails for contention (no 500)', async () => {
  expect((await freshRequest(api('/collections'), { method: 'POST', headers: bearer(s.secretKey), body: { name: 'wk_load', fields: { n: { type: 'number' } } } })).status).toBe(201);
  const USERS = 20;
  for (let u = 0; u < USERS; u++) await signUp(`load${u}@workers.example`);
  const KEYS = 400;
  const CONCURRENCY = 32;
  // Each Idempotency-Key is sent twice, the two copies in flight at once; sign-ins in between.
  const jobs: Array<() => Promise<Response>> = [];
  for (let i = 0; i < KEYS; i++) {
    const create = () =>
      fetch(api('/collections/wk_load/records'), {
        method: 'POST',
        headers: { ...bearer(s.secretKey), 'Content-Type': 'application/json', 'Idempotency-Key': `load-${i}` },
        body: JSON.stringify({ data: { n: i } }),
      });
    jobs.push(create, create);
    if (i % 4 === 0) {
      const email = `load${(i / 4) % USERS}@workers.example`;
      jobs.push(() =>
        fetch(api('/auth/signin'), {
          method: 'POST',
          headers: { ...bearer(s.publicKey), 'Content-Type': 'application/json' },
          body: JSON.stringify({ email, password: 'correct horse battery' }),
        }),
      );
    }
  }
  const statuses: Record<string, number> = {};
  const workers = new Set<string>();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < jobs.length) {
        const res = await jobs[next++]!();
        await res.arrayBuffer();
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        workers.add(res.headers.get('x-plinth-worker') ?? '?');
      }
    }),
  );
  // Every create answers 201 (a replay too); every sign-in 200 (each user signs in exactly
  // RATE_LIMIT_EMAIL times). Before BEGIN IMMEDIATE, a few of these were 500 SQLITE_BUSY.
  expect(RATE_LIMIT_EMAIL * USERS).toBe(KEYS / 4);
  expect(statuses).toEqual({ '201': KEYS * 2, '200': KEYS / 4 });
  expect(workers).toEqual(new Set(['1', '2']));
  const list = await freshRequest(api('/collections/wk_load/records?limit=1000'), { headers: bearer(s.secretKey) });
  expect((list.body as { records: unknown[] }).records).toHaveLength(KEYS);
});

it('realtime: subscribers on both workers see the writes made on either, with the same gap-free seqs', async () => {
  expect((await freshRequest(api('/collections'), { method: 'POST', headers: bearer(s.secretKey), body: { name: 'wk_live', fields: { n: { type: 'number' } } } })).status).toBe(201);
  // Two WebSocket connections in a row: the primary hands them to the two workers in turn.
  const subs = [await RtClient.connect(s.url, 'demo', { headerKey: s.secretKey }), await RtClient.connect(s.url, 'demo', { headerKey: s.secretKey })];
  try {
    for (const c of subs) expect((await c.subscribe('live', { collection: 'wk_live' })).type).toBe('subscribed');
    const WRITES = 6;
    const writes = await series(WRITES, (i) =>
      freshRequest(api('/collections/wk_live/records'), { method: 'POST', headers: bearer(s.secretKey), body: { data: { n: i } } }),
    );
    expect(writes.answers.map((a) => a.status)).toEqual(Array(WRITES).fill(201));
    expect(writes.workers).toEqual(new Set(['1', '2']));
    const created = writes.answers.map((a) => (a.body as { record: { id: string } }).record.id);
    const seen = await Promise.all(subs.map((c) => c.waitForEvents('live', WRITES)));
    for (const events of seen) {
      // Each subscriber sits on one worker and got every write, made on either worker, in order.
      expect(events.map((e) => e.record.id)).toEqual(created);
      const seqs = events.map((e) => e.seq);
      expect(seqs.slice(1).map((q, i) => q - seqs[i]!)).toEqual(Array(WRITES - 1).fill(1));
    }
    expect(seen[0]!.map((e) => e.seq)).toEqual(seen[1]!.map((e) => e.seq));
  } finally {
    for (const c of subs) c.close();
  }
});
