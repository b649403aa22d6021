/**
 * Standalone workers wake each other: an event appended by one worker reaches
 * subscribers on the other at once — the primary relays the appending worker's word — instead of
 * at the other's next poll of the shared log. The poll is set to 10 s here, so only the wake can
 * explain a delivery within a few seconds.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freshRequest, startStandalone, stopStandalone, type StandaloneProcess } from '@plinth/testing/standalone-process';
import { RtClient } from './support/rt-client';

let s: StandaloneProcess;
let dataDir: string;
const clients: RtClient[] = [];

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-wake-'));
  s = await startStandalone(dataDir, { PLINTH_WORKERS: '2', PLINTH_EVENTS_POLL_MS: '10000' });
}, 60_000);
afterAll(async () => {
  for (const c of clients) c.close();
  if (s) await stopStandalone(s);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

it('writes on either worker reach subscribers on both within 3 s, with the poll at 10 s', async () => {
  const headers = { Authorization: `Bearer ${s.secretKey}` };
  const api = `${s.url}/v1/projects/demo/collections`;
  expect((await freshRequest(api, { method: 'POST', headers, body: { name: 'ticks', fields: { n: { type: 'integer' } }, rules: { read: 'true' } } })).status).toBe(201);
  for (let i = 0; i < 2; i++) {
    const c = await RtClient.connect(s.url, 'demo', { queryKey: s.publicKey });
    clients.push(c);
    expect(await c.subscribe('t', { collection: 'ticks' })).toMatchObject({ type: 'subscribed' });
  }
  const workers = new Set<string>();
  for (let n = 0; n < 6; n++) {
    const res = await freshRequest(`${api}/ticks/records`, { method: 'POST', headers, body: { data: { n } } });
    expect(res.status).toBe(201);
    workers.add(res.worker!);
  }
  expect([...workers].sort()).toEqual(['1', '2']);
  for (const c of clients) expect((await c.waitForEvents('t', 6, 3000)).map((e) => (e.record as { n?: number }).n).sort()).toEqual([0, 1, 2, 3, 4, 5]);
}, 60_000);

it('a burst of concurrent writes (several commits in one turn of a worker) all reach subscribers on both workers, with the poll at 10 s', async () => {
  const headers = { Authorization: `Bearer ${s.secretKey}` };
  const api = `${s.url}/v1/projects/demo/collections`;
  expect((await freshRequest(api, { method: 'POST', headers, body: { name: 'bursts', fields: { n: { type: 'integer' } }, rules: { read: 'true' } } })).status).toBe(201);
  const listeners: RtClient[] = [];
  for (let i = 0; i < 2; i++) {
    const c = await RtClient.connect(s.url, 'demo', { queryKey: s.publicKey });
    clients.push(c);
    listeners.push(c);
    expect(await c.subscribe('b', { collection: 'bursts' })).toMatchObject({ type: 'subscribed' });
  }
  const n = 60;
  const answers = await Promise.all(
    Array.from({ length: n }, (_, i) => freshRequest(`${api}/bursts/records`, { method: 'POST', headers, body: { data: { n: i } } })),
  );
  expect(answers.map((r) => r.status)).toEqual(Array(n).fill(201));
  expect(new Set(answers.map((r) => r.worker)).size).toBe(2);
  const all = Array.from({ length: n }, (_, i) => i);
  for (const c of listeners) {
    expect((await c.waitForEvents('b', n, 3000)).map((e) => (e.record as { n?: number }).n).sort((a, b) => a! - b!)).toEqual(all);
  }
}, 60_000);
