/**
 * Realtime end to end through the gateway, with real `ws` clients and real signed-up users.
 * Runs in both topologies (standalone in-process; cluster: two realtime replicas on Redis Streams).
 */
import { isDeepStrictEqual } from 'node:util';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import type { DeliveredEvent } from '@plinth/realtime';
import { enableAuth, projectCall, type ProjectAccess, type SessionBody } from '../../../test/e2e/support/api';
import { RtClient, refusal, wsUrl } from './support/rt-client';

let t: TestPlinth;
let p: ProjectAccess;
let url: string;
const clients: RtClient[] = [];

interface User {
  id: string;
  token: string;
  email: string;
}

async function signUp(label: string): Promise<User> {
  const email = `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}@rt.example.com`;
  const res = await projectCall<SessionBody>(p, 'POST', '/auth/signup', { key: p.publicKey, body: { email, password: 'correct horse battery' } });
  expect(res.status).toBe(201);
  return { id: res.body.user.id, token: res.body.access_token, email };
}

async function connect(user?: User): Promise<RtClient> {
  const c = await RtClient.connect(url, p.id, { queryKey: p.publicKey });
  clients.push(c);
  if (user) {
    c.send({ type: 'auth', token: user.token });
    await c.next((m) => m.type === 'auth_ok');
  }
  return c;
}

async function create(collection: string, data: Record<string, unknown>): Promise<{ id: string; version: number }> {
  const res = await projectCall<{ record: { id: string; version: number } }>(p, 'POST', `/collections/${collection}/records`, { key: p.secretKey, body: { data } });
  expect(res.status).toBe(201);
  return res.body.record;
}

async function patch(collection: string, id: string, data: Record<string, unknown>): Promise<void> {
  expect((await projectCall(p, 'PATCH', `/collections/${collection}/records/${id}`, { key: p.secretKey, body: { data } })).status).toBe(200);
}

const ids = (events: DeliveredEvent[]) => events.map((e) => `${e.kind}:${e.record.id}`);

let alice: User;
let bob: User;

beforeAll(async () => {
  t = await startTestPlinth({ realtimeReplicas: 2 });
  url = await t.url();
  p = { url, id: t.project.id, publicKey: t.project.publicKey, secretKey: t.project.secretKey };
  await enableAuth(p);
  const owner = { read: 'auth != null && record.owner == auth.uid' };
  for (const [name, rules] of [
    ['notes', owner],
    ['posts', { read: 'true' }],
  ] as const) {
    const res = await projectCall(p, 'POST', '/collections', {
      key: p.secretKey,
      body: { name, fields: { title: { type: 'text' }, owner: { type: 'text' }, tag: { type: 'text' } }, rules },
    });
    expect(res.status).toBe(201);
  }
  alice = await signUp('alice');
  bob = await signUp('bob');
});

afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});
afterAll(() => t.close());

describe('owner-only collection', () => {
  it('A receives only A’s events; an owner change gives A leave and B enter; a delete gives delete', async () => {
    const a = await connect(alice);
    const b = await connect(bob);
    expect(await a.subscribe('n', { collection: 'notes', snapshot: true })).toMatchObject({ type: 'subscribed', collection: 'notes' });
    expect(await b.subscribe('n', { collection: 'notes', snapshot: true })).toMatchObject({ type: 'subscribed' });
    await a.next((m) => m.type === 'snapshot');

    const na = await create('notes', { title: 'for a', owner: alice.id });
    const nb = await create('notes', { title: 'for b', owner: bob.id });
    await patch('notes', na.id, { owner: bob.id });
    expect((await projectCall(p, 'DELETE', `/collections/notes/records/${na.id}`, { key: p.secretKey })).status).toBe(200);

    const bEvents = await b.waitForEvents('n', 3);
    expect(ids(bEvents)).toEqual([`create:${nb.id}`, `enter:${na.id}`, `delete:${na.id}`]);
    expect(bEvents[1]!.record).toMatchObject({ owner: bob.id, version: 2 });
    const aEvents = await a.waitForEvents('n', 2);
    expect(ids(aEvents)).toEqual([`create:${na.id}`, `leave:${na.id}`]);
    // A leave carries no data A may no longer read.
    expect(aEvents[1]!.record).toEqual({ id: na.id, version: 2 });
    // Seqs increase.
    for (const list of [aEvents, bEvents]) for (let i = 1; i < list.length; i++) expect(list[i]!.seq).toBeGreaterThan(list[i - 1]!.seq);
    // A never saw B's record: a marker event for A proves A's stream is past B's writes.
    const marker = await create('notes', { title: 'marker', owner: alice.id });
    await a.next(() => a.events('n').some((e) => e.record.id === marker.id));
    expect(JSON.stringify(a.messages)).not.toContain(nb.id);
  });
});

describe('public-read collection', () => {
  it('every subscriber sees it, signed in or anonymous; a where narrower than the rule is honoured', async () => {
    const a = await connect(alice);
    const anon = await connect();
    await a.subscribe('all', { collection: 'posts' });
    await anon.subscribe('all', { collection: 'posts' });
    await a.subscribe('x', { collection: 'posts', where: [['tag', '==', 'x']] });
    const px = await create('posts', { title: 'x', tag: 'x' });
    const py = await create('posts', { title: 'y', tag: 'y' });
    expect(ids(await anon.waitForEvents('all', 2))).toEqual([`create:${px.id}`, `create:${py.id}`]);
    expect(ids(await a.waitForEvents('all', 2))).toEqual([`create:${px.id}`, `create:${py.id}`]);
    // Moving y into the where is an enter for the narrow subscription.
    await patch('posts', py.id, { tag: 'x' });
    expect(ids(await a.waitForEvents('x', 2))).toEqual([`create:${px.id}`, `enter:${py.id}`]);
  });
});

describe('revocation', () => {
  it('after sign-out-all the connection gets auth_revoked and no event committed after it', async () => {
    const victim = await signUp('victim');
    const a = await connect(victim);
    const control = await connect(bob);
    await a.subscribe('p', { collection: 'posts' });
    await control.subscribe('p', { collection: 'posts' });
    const before = await create('posts', { title: 'before' });
    await a.next(() => a.events('p').some((e) => e.record.id === before.id));

    const out = await projectCall(p, 'POST', '/auth/signout-all', { key: p.publicKey, userToken: victim.token });
    expect(out.status).toBe(200);
    expect(await a.next((m) => m.type === 'auth_revoked')).toMatchObject({ ended: ['p'] });
    const after = await create('posts', { title: 'after' });
    await control.next(() => control.events('p').some((e) => e.record.id === after.id));
    expect(a.events('p').map((e) => e.record.id)).not.toContain(after.id);
    // Subscribing again with the revoked token is refused like the REST API refuses it — or, when
    // the service's periodic revocation check meets the token again before records has answered
    // (a loaded machine), the subscription is ended while it resolves: refused all the same.
    a.send({ type: 'auth', token: victim.token });
    a.send({ type: 'subscribe', id: 'again', collection: 'posts' });
    const refused = await a.next(
      (m) => ((m.type === 'subscribed' || m.type === 'error') && m.id === 'again') || (m.type === 'auth_revoked' && (m as { ended: string[] }).ended.includes('again')),
    );
    if (refused.type === 'auth_revoked') expect(refused).toMatchObject({ ended: ['again'] });
    else expect(refused).toMatchObject({ type: 'error', id: 'again', error: 'unauthorized' });
    expect(a.events('again')).toEqual([]);
  });
});

describe('rule changes', () => {
  it('a change of the collection’s rules ends its subscriptions with resubscribe', async () => {
    await projectCall(p, 'POST', '/collections', { key: p.secretKey, body: { name: 'drafts', fields: { title: { type: 'text' } }, rules: { read: 'true' } } });
    const a = await connect(alice);
    await a.subscribe('d', { collection: 'drafts' });
    expect((await projectCall(p, 'PATCH', '/collections/drafts', { key: p.secretKey, body: { rules: { read: 'false' } } })).status).toBe(200);
    expect(await a.next((m) => m.type === 'resubscribe')).toMatchObject({ id: 'd', reason: 'collection_changed' });
    // Re-subscribing now meets the new rule, with the REST subscribe endpoint's answer.
    const rest = await projectCall(p, 'POST', '/collections/drafts/subscribe', { key: p.publicKey, dbUserToken: alice.token, body: {} });
    expect(rest.status).toBe(403);
    expect(await a.subscribe('d2', { collection: 'drafts' })).toMatchObject({ type: 'error', error: rest.body.error, message: rest.body.message });
  });
});

describe('bad input', () => {
  it('malformed JSON, unknown type, unknown collection, a refused where: clear errors, the connection stays usable', async () => {
    const a = await connect(alice);
    a.send('{not json');
    expect(await a.next((m) => m.type === 'error')).toMatchObject({ error: 'invalid_request', message: 'The message is not valid JSON.' });
    a.send({ type: 'shout' });
    expect(await a.next((m) => m.type === 'error' && String(m.message).includes('shout'))).toMatchObject({ error: 'invalid_request' });

    const unknownRest = await projectCall(p, 'GET', '/collections/nope/records', { key: p.publicKey });
    expect(await a.subscribe('u', { collection: 'nope' })).toMatchObject({ type: 'error', id: 'u', error: 'not_found', message: unknownRest.body.message });

    const where = [['title', 'like', 'x']];
    const whereRest = await projectCall(p, 'GET', `/collections/posts/records?where=${encodeURIComponent(JSON.stringify(where))}`, { key: p.publicKey });
    expect(whereRest.status).toBe(400);
    expect(await a.subscribe('w', { collection: 'posts', where })).toMatchObject({ type: 'error', id: 'w', error: 'invalid_request', message: whereRest.body.message });

    a.send({ type: 'ping' });
    await a.next((m) => m.type === 'pong');
    expect(await a.subscribe('ok', { collection: 'posts' })).toMatchObject({ type: 'subscribed', id: 'ok' });
  });

  it('a secret key in the query string is refused; in the Authorization header it is accepted', async () => {
    const refused = await refusal(wsUrl(url, p.id, { queryKey: p.secretKey }));
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: 'invalid_request', details: { field: 'key' } });
    expect(refused.body.message).toMatch(/secret key may not be sent in the URL/);
    expect((await refusal(wsUrl(url, p.id, {}))).status).toBe(401);
    // A plain GET (no upgrade) is told to use a WebSocket.
    const plain = await fetch(`${url}/v1/projects/${p.id}/realtime?key=${p.publicKey}`);
    expect(plain.status).toBe(400);
    expect(await plain.json()).toMatchObject({ error: 'invalid_request' });
    const server = await RtClient.connect(url, p.id, { headerKey: p.secretKey });
    clients.push(server);
    expect(await server.subscribe('s', { collection: 'notes' })).toMatchObject({ type: 'subscribed' });
  });
});

describe('resume', () => {
  it('a client cut off mid-stream reconnects with resume_from and ends with every record as it is, nothing twice, in order', async () => {
    await projectCall(p, 'POST', '/collections', { key: p.secretKey, body: { name: 'feed', fields: { n: { type: 'integer' } }, rules: { read: 'true' } } });
    let c = await connect(alice);
    const { epoch } = await c.subscribe('f', { collection: 'feed' });
    const received: DeliveredEvent[] = [];
    const writes: string[] = [];
    const writer = (async () => {
      for (let i = 0; i < 40; i++) {
        if (i % 3 === 2) {
          const id = writes[writes.length - 1]!.split(':')[1]!;
          await patch('feed', id, { n: i });
          writes.push(`update:${id}`);
        } else {
          writes.push(`create:${(await create('feed', { n: i })).id}`);
        }
      }
    })();
    await c.waitForEvents('f', 5);
    // Cut the connection: in the cluster, SIGKILL the realtime replica that holds it.
    if (t.cluster) {
      const replicas = t.cluster.processes.filter((x) => x.name.startsWith('realtime-'));
      const holding = [];
      for (const r of replicas) {
        const text = await (await fetch(`${r.url}/metrics`)).text();
        if (/^plinth_realtime_connections\{[^}]*\} [1-9]/m.test(text)) holding.push(r);
      }
      expect(holding).toHaveLength(1);
      holding[0]!.child.kill('SIGKILL');
      await c.closed;
    } else {
      c.close();
      await c.closed;
    }
    received.push(...c.events('f'));
    const last = received[received.length - 1]!.seq;
    // Reconnect (the gateway may first pick the dead replica: try again).
    for (let attempt = 0; ; attempt++) {
      try {
        c = await connect(alice);
        break;
      } catch (err) {
        if (attempt > 20) throw err;
      }
    }
    expect(await c.subscribe('f', { collection: 'feed', resume_from: last, resume_epoch: epoch })).toMatchObject({ type: 'subscribed', resumed: true, seq: last });
    await writer;
    const final = await projectCall<{ records: { id: string; n: number }[] }>(p, 'GET', '/collections/feed/records?limit=1000', { key: p.secretKey });
    const finalState = Object.fromEntries(final.body.records.map((r) => [r.id, r.n]));
    // The replay sends each record changed meanwhile once, as it is now; live events follow.
    // Applying everything received gives the records' final state.
    const all = () => [...received, ...c.events('f')];
    const state = () => Object.fromEntries(all().map((e) => [e.record.id, (e.record as { n?: number }).n]));
    await c.next(() => isDeepStrictEqual(state(), finalState));
    const got = all();
    for (let i = 1; i < got.length; i++) expect(got[i]!.seq).toBeGreaterThan(got[i - 1]!.seq);
    const versions = got.map((e) => `${e.record.id}@${e.record.version}`);
    expect(new Set(versions).size).toBe(versions.length);
  });
});
