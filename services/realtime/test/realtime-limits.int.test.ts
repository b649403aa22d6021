/**
 * Realtime limits through the gateway (standalone): slow consumers, subscriptions per connection,
 * connections per project, the idle timeout. Small limits are set through the environment.
 */
import path from 'node:path';
import request from 'supertest';
import { SqliteEventBus } from '@plinth/shared';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { CLOSE } from '@plinth/realtime';
import { projectCall, type ProjectAccess } from '../../../test/e2e/support/api';
import { RtClient } from './support/rt-client';

let t: TestPlinth;
let p: ProjectAccess;
let url: string;
const clients: RtClient[] = [];

const MAX_BUFFERED = 65_536;

beforeAll(async () => {
  t = await startTestPlinth({
    env: {
      REALTIME_MAX_BUFFERED_BYTES: String(MAX_BUFFERED),
      REALTIME_MAX_SUBSCRIPTIONS_PER_CONNECTION: '30',
      REALTIME_MAX_CONNECTIONS_PER_PROJECT: '3', // the other tests hold at most 2 at a time
      REALTIME_PING_INTERVAL_MS: '300',
      REALTIME_IDLE_TIMEOUT_MS: '2000',
    },
  });
  url = await t.url();
  p = { url, id: t.project.id, publicKey: t.project.publicKey, secretKey: t.project.secretKey };
  const res = await projectCall(p, 'POST', '/collections', { key: p.secretKey, body: { name: 'blobs', fields: { body: { type: 'text' } }, rules: { read: 'true' } } });
  expect(res.status).toBe(201);
});
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});
afterAll(() => t.close());

async function connect(opts: { autoPong?: boolean; welcome?: boolean; project?: { id: string; publicKey: string } } = {}): Promise<RtClient> {
  const project = opts.project ?? p;
  const c = await RtClient.connect(url, project.id, { queryKey: project.publicKey, ...opts });
  clients.push(c);
  return c;
}

async function realtimeMetrics(): Promise<string> {
  const realtime = t.standalone!.services.find((s) => s.name === 'realtime')!;
  return (await request(realtime.app).get('/metrics').expect(200)).text;
}

function metric(text: string, name: string): number {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : NaN;
}

it('a client that stops reading is closed with 4008 and the server stops queueing for it', async () => {
  const slow = await connect();
  const subs = 25;
  for (let i = 0; i < subs; i++) await slow.subscribe(`s${i}`, { collection: 'blobs' });
  const dropsBefore = metric(await realtimeMetrics(), 'plinth_realtime_slow_consumers_dropped_total');
  slow.ws.pause();
  const creates = 40;
  const body = 'x'.repeat(30_000);
  for (let i = 0; i < creates; i++) {
    expect((await projectCall(p, 'POST', '/collections/blobs/records', { key: p.secretKey, body: { data: { body } } })).status).toBe(201);
  }
  expect(metric(await realtimeMetrics(), 'plinth_realtime_slow_consumers_dropped_total')).toBe(dropsBefore + 1);
  slow.ws.resume();
  expect(await slow.closed).toEqual({ code: CLOSE.slowConsumer, reason: 'slow consumer' });
  // 40 creates × 25 subscriptions ≈ 30 MB were due; the server sent only what fit in the socket
  // buffers plus its own 64 KiB limit before it stopped.
  const delivered = slow.messages.filter((m) => m.type === 'events').length;
  expect(delivered).toBeLessThan((creates * subs) / 2);
});

it('refuses a subscription beyond the per-connection limit with rate_limited; the connection stays usable', async () => {
  const c = await connect();
  for (let i = 0; i < 30; i++) expect(await c.subscribe(`s${i}`, { collection: 'blobs' })).toMatchObject({ type: 'subscribed' });
  expect(await c.subscribe('one-too-many', { collection: 'blobs' })).toMatchObject({
    type: 'error',
    id: 'one-too-many',
    error: 'rate_limited',
    message: 'A connection may hold at most 30 subscriptions.',
  });
  c.send({ type: 'unsubscribe', id: 's0' });
  await c.next((m) => m.type === 'unsubscribed' && m.id === 's0');
  expect(await c.subscribe('now-fits', { collection: 'blobs' })).toMatchObject({ type: 'subscribed' });
});

it('refuses a connection beyond the per-project limit with an error and close code 4029', async () => {
  // A project of its own, so the other tests' connections do not count.
  const project = await t.createProject();
  for (let i = 0; i < 3; i++) await connect({ project });
  const extra = await connect({ welcome: false, project });
  expect(await extra.next((m) => m.type === 'error')).toMatchObject({ error: 'rate_limited', details: { limit: 3 } });
  expect((await extra.closed).code).toBe(CLOSE.tooManyConnections);
});

it('closes a connection that answers no ping and sends nothing with 4002', async () => {
  const silent = await connect({ autoPong: false });
  const alive = await connect();
  expect((await silent.closed).code).toBe(CLOSE.idle);
  // A client that answers pings is kept.
  alive.send({ type: 'ping' });
  await alive.next((m) => m.type === 'pong');
});

it('resume_from a trimmed position answers resync_required and a fresh snapshot, then live events', async () => {
  await projectCall(p, 'POST', '/collections', { key: p.secretKey, body: { name: 'old', fields: { n: { type: 'integer' } }, rules: { read: 'true' } } });
  const first = await connect();
  const { epoch } = await first.subscribe('o', { collection: 'old' });
  for (let i = 0; i < 3; i++) await projectCall(p, 'POST', '/collections/old/records', { key: p.secretKey, body: { data: { n: i } } });
  const [early] = await first.waitForEvents('o', 1);
  // Another process trims the log down to its last 100 events; then 150 more changes happen.
  const log = new SqliteEventBus({ file: path.join(t.dataDir, 'records.db'), retention: { maxEvents: 100, maxAgeMs: 3_600_000 } });
  try {
    for (let i = 0; i < 150; i++) await projectCall(p, 'POST', '/collections/blobs/records', { key: p.secretKey, body: { data: { body: 'y' } } });
    await log.trim();
  } finally {
    await log.close();
  }
  const c = await connect();
  expect(await c.subscribe('o', { collection: 'old', resume_from: early!.seq, resume_epoch: epoch })).toMatchObject({ type: 'subscribed', resumed: false });
  expect(await c.next((m) => m.type === 'resync_required')).toMatchObject({ id: 'o' });
  const snapshot = await c.next((m) => m.type === 'snapshot');
  expect((snapshot as unknown as { records: unknown[] }).records).toHaveLength(3);
  const created = await projectCall<{ record: { id: string } }>(p, 'POST', '/collections/old/records', { key: p.secretKey, body: { data: { n: 9 } } });
  expect((await c.waitForEvents('o', 1))[0]).toMatchObject({ kind: 'create', record: { id: created.body.record.id } });
});
