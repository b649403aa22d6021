/**
 * Resume replays history as it is now: under the rules as they are now, with each
 * record as it is now — a record deleted since arrives as a `delete` without its data, a version
 * the subscriber may no longer read is not sent — and never `resumed: true` across a rule change
 * or a collection deleted and created again, nor past the catch-up's limit. Standalone, small
 * limits from the environment.
 */
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { projectCall, type ProjectAccess } from '../../../test/e2e/support/api';
import { RtClient, type Msg } from './support/rt-client';

let t: TestPlinth;
let p: ProjectAccess;
let url: string;
const clients: RtClient[] = [];

const MAX_EVENTS = 20;

beforeAll(async () => {
  t = await startTestPlinth({ env: { REALTIME_CATCHUP_MAX_EVENTS: String(MAX_EVENTS) } });
  url = await t.url();
  p = { url, id: t.project.id, publicKey: t.project.publicKey, secretKey: t.project.secretKey };
});
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});
afterAll(() => t.close());

async function collection(name: string, read: string): Promise<void> {
  const res = await projectCall(p, 'POST', '/collections', {
    key: p.secretKey,
    body: { name, fields: { title: { type: 'text' }, public: { type: 'boolean' } }, rules: { read } },
  });
  expect(res.status).toBe(201);
}

async function write(method: 'POST' | 'PATCH' | 'DELETE', path: string, data?: Record<string, unknown>): Promise<{ id: string; version: number }> {
  const res = await projectCall<{ record: { id: string; version: number } }>(p, method, path, { key: p.secretKey, ...(data ? { body: { data } } : {}) });
  expect(res.status).toBeLessThan(300);
  return res.body.record;
}

/** An anonymous client (public key, no token). */
async function anonymous(): Promise<RtClient> {
  const c = await RtClient.connect(url, p.id, { queryKey: p.publicKey });
  clients.push(c);
  return c;
}

/** The log's epoch, as the last `subscribed` told it. */
let epoch = '';

/** Subscribes live, and returns the position the client holds when it is cut off. */
async function positionAfter(name: string): Promise<{ seq: number; client: RtClient }> {
  const c = await anonymous();
  const subscribed = await c.subscribe('s', { collection: name });
  expect(subscribed.type).toBe('subscribed');
  epoch = subscribed.epoch as string;
  return { seq: subscribed.seq as number, client: c };
}

/** Every message to subscription `id` after the resume, once its answer is complete. */
async function resume(name: string, from: number): Promise<{ subscribed: Msg; after: Msg[]; text: string }> {
  const c = await anonymous();
  const subscribed = await c.subscribe('r', { collection: name, resume_from: from, resume_epoch: epoch });
  // A ping's pong comes after everything the resume sent.
  c.send({ type: 'ping' });
  await c.next((m) => m.type === 'pong');
  const after = c.messages.filter((m) => m.id === 'r' && m !== subscribed);
  return { subscribed, after, text: JSON.stringify(c.messages) };
}

it('anonymous replay of a record deleted since, and of one made private since: no data delivered', async () => {
  await collection('as_now', 'record.public == true');
  // What the client held when it was cut off: two public records.
  const live = await positionAfter('as_now');
  const kept = await write('POST', '/collections/as_now/records', { title: 'held then deleted', public: true });
  const hidden = await write('POST', '/collections/as_now/records', { title: 'held then hidden', public: true });
  await live.client.waitForEvents('s', 2);
  const position = live.client.events('s').at(-1)!.seq;
  live.client.close();
  // While it is away: both deleted or made private, and two more that never stay readable.
  await write('DELETE', `/collections/as_now/records/${kept.id}`);
  await write('PATCH', `/collections/as_now/records/${hidden.id}`, { title: 'now private: secret A', public: false });
  const gone = await write('POST', '/collections/as_now/records', { title: 'public, then deleted: secret B', public: true });
  await write('DELETE', `/collections/as_now/records/${gone.id}`);
  const hid = await write('POST', '/collections/as_now/records', { title: 'public, then private: secret C', public: true });
  await write('PATCH', `/collections/as_now/records/${hid.id}`, { title: 'private: secret D', public: false });

  for (const from of [position, 0]) {
    const r = await resume('as_now', from);
    expect(r.subscribed).toMatchObject({ type: 'subscribed', resumed: true });
    expect(r.text).not.toContain('secret');
    const events = r.after.filter((m) => m.type === 'events').flatMap((m) => m.events as { kind: string; record: Record<string, unknown> }[]);
    for (const e of events) expect(Object.keys(e.record).sort()).toEqual(['id', 'version']);
    if (from === position) {
      expect(events.map((e) => `${e.kind}:${e.record.id}`)).toEqual([`delete:${kept.id}`, `leave:${hidden.id}`]);
    } else {
      expect(events).toEqual([]); // nothing readable is left
    }
  }
});

it('a resume across a narrowing rule change: resync_required and a snapshot under the new rule, never resumed: true', async () => {
  await collection('narrowed', 'true');
  const live = await positionAfter('narrowed');
  await write('POST', '/collections/narrowed/records', { title: 'public', public: true });
  const secret = await write('POST', '/collections/narrowed/records', { title: 'secret E', public: false });
  await live.client.waitForEvents('s', 2);
  const position = live.client.events('s').at(-1)!.seq;
  live.client.close();
  expect((await projectCall(p, 'PATCH', '/collections/narrowed', { key: p.secretKey, body: { rules: { read: 'record.public == true' } } })).status).toBe(200);

  const r = await resume('narrowed', position);
  expect(r.subscribed).toMatchObject({ type: 'subscribed', resumed: false });
  expect(r.after.map((m) => m.type)).toEqual(['resync_required', 'snapshot']);
  const snapshot = r.after[1] as Msg & { records: { id: string }[] };
  expect(snapshot.records.map((x) => x.id)).not.toContain(secret.id);
  expect(r.text).not.toContain('secret E');
});

it('a resume across the collection deleted and created again: collection_deleted, never resumed: true', async () => {
  await collection('again', 'true');
  const live = await positionAfter('again');
  await write('POST', '/collections/again/records', { title: 'old collection', public: true });
  await live.client.waitForEvents('s', 1);
  const position = live.client.events('s').at(-1)!.seq;
  live.client.close();
  expect((await projectCall(p, 'DELETE', '/collections/again', { key: p.secretKey })).status).toBe(200);
  await collection('again', 'true');

  const r = await resume('again', position);
  expect(r.subscribed).toMatchObject({ type: 'subscribed', resumed: false });
  expect(r.after).toEqual([{ type: 'resubscribe', id: 'r', reason: 'collection_deleted' }]);
});

it('a resume past REALTIME_CATCHUP_MAX_EVENTS of its collection: resync_required and a fresh snapshot', async () => {
  await collection('busy', 'true');
  const live = await positionAfter('busy');
  live.client.close();
  for (let i = 0; i < MAX_EVENTS + 5; i++) await write('POST', '/collections/busy/records', { title: `n${i}`, public: true });

  const r = await resume('busy', live.seq);
  expect(r.subscribed).toMatchObject({ type: 'subscribed', resumed: false });
  expect(r.after.map((m) => m.type)).toEqual(['resync_required', 'snapshot']);
  expect((r.after[1] as Msg & { records: unknown[] }).records).toHaveLength(MAX_EVENTS + 5);
});
