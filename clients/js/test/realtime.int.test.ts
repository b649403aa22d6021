import { WebSocket } from 'ws';
import { type PlinthClient, type RealtimeEvent } from '../src';
import { enableRealtime, type WebSocketConstructor } from '../src/realtime';
import { startSdkFixture, type SdkFixture } from './fixture';
import { startTcpProxy } from './tcp-proxy';

interface Post {
  author: string;
  title: string;
}

/** The real `ws` WebSocket, noting every message the SDK sends (to check what it authenticates with). */
const sent: Array<{ socket: number; message: { type: string; token?: string | null; resume_from?: number } }> = [];
let sockets = 0;
class NotingWebSocket extends WebSocket {
  private readonly n = ++sockets;
  override send(data: string): void {
    sent.push({ socket: this.n, message: JSON.parse(data) as (typeof sent)[number]['message'] });
    super.send(data);
  }
}
const WS = NotingWebSocket as unknown as WebSocketConstructor;

async function until(what: string, cond: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Realtime through the SDK against a real standalone Plinth (gateway + realtime service). */
describe('@plinth/client/realtime', () => {
  let f: SdkFixture;
  const client = (opts: Parameters<SdkFixture['client']>[0] = {}) => f.client(opts);
  let writer: PlinthClient;
  let writerId: string;

  beforeAll(async () => {
    f = await startSdkFixture({ access_token_ttl: 60 });
    await f.admin.collections.create({
      name: 'rt_posts',
      fields: { author: { type: 'text', required: true }, title: { type: 'text', required: true } },
      rules: { read: 'auth != null', create: 'data.author == auth.uid', update: 'record.author == auth.uid', delete: 'record.author == auth.uid' },
    });
    writer = client();
    writerId = (await writer.auth.signUp({ email: 'rt-writer@example.com', password: 'realtime password' })).user.id;
  });
  afterAll(async () => {
    await f.close();
  });

  it("a subscriber sees another client's writes: snapshot, create, update, enter, leave, delete", async () => {
    const first = await writer.collection<Post>('rt_posts').create({ author: writerId, title: 'before' });
    const reader = client();
    await reader.auth.signUp({ email: 'rt-reader@example.com', password: 'realtime password' });
    enableRealtime(reader, { WebSocket: WS });
    const all: RealtimeEvent<Post>[] = [];
    const hot: RealtimeEvent<Post>[] = [];
    const stopAll = reader.collection<Post>('rt_posts').subscribe((e) => all.push(e), { snapshot: true });
    const stopHot = reader.collection<Post>('rt_posts').where('title', '==', 'hot').subscribe((e) => hot.push(e), { snapshot: true });
    // A snapshot is read once its subscription is live.
    await until('the snapshots', () => all.length === 1 && hot.length === 1);
    expect(all[0]).toEqual({ kind: 'snapshot', records: [first], cursor: null });
    expect(hot.shift()).toEqual({ kind: 'snapshot', records: [], cursor: null });

    const posts = writer.collection<Post>('rt_posts');
    const p = await posts.create({ author: writerId, title: 'new' });
    await posts.update(p.id, { title: 'hot' });
    await posts.update(p.id, { title: 'cold' });
    await posts.delete(p.id);
    await until('four events', () => all.length === 5);
    expect(all.slice(1).map((e) => e.kind)).toEqual(['create', 'update', 'update', 'delete']);
    expect(all.slice(1).map((e) => (e.kind === 'error' || e.kind === 'snapshot' ? null : e.record.id))).toEqual([p.id, p.id, p.id, p.id]);
    await until('enter and leave', () => hot.length === 2);
    expect(hot.map((e) => e.kind)).toEqual(['enter', 'leave']);
    expect(hot[1]).toEqual({ kind: 'leave', seq: expect.any(Number), record: { id: p.id, version: 3 } });
    // One WebSocket for both subscriptions.
    expect(new Set(sent.filter((s) => s.message.type === 'subscribe').map((s) => s.socket)).size).toBe(1);
    stopAll();
    stopHot();
  });

  it('a forced disconnect, writes meanwhile, then a reconnect: every record changed meanwhile once, as it is now, none lost, none doubled; the token is never stale', async () => {
    const proxy = await startTcpProxy(f.url);
    const reader = client({ refreshMargin: 58 }); // a refresh every ~2 s
    await reader.auth.signIn('rt-reader@example.com', 'realtime password');
    // Only the WebSocket goes through the relay that the test cuts; REST calls (the refresh) do not.
    enableRealtime(reader, { WebSocket: WS, url: proxy.url, minReconnectDelayMs: 100, maxReconnectDelayMs: 1000 });
    const seen: RealtimeEvent<Post>[] = [];
    const snapshots: RealtimeEvent<Post>[] = [];
    const firstSocket = sockets + 1;
    const stop = reader
      .collection<Post>('rt_posts')
      .where('author', '==', writerId)
      .where('title', '!=', 'before')
      .subscribe((e) => (e.kind === 'snapshot' ? snapshots.push(e) : seen.push(e)), { snapshot: true });
    const posts = writer.collection<Post>('rt_posts');
    const ids: string[] = [];
    await until('the subscription', () => snapshots.length === 1);
    ids.push((await posts.create({ author: writerId, title: 'live 1' })).id);
    await until('the first event', () => seen.length === 1);

    // Cut the connection and keep it down while the writer goes on.
    proxy.cut({ shut: true });
    const refreshedWhileDown = new Promise<void>((resolve) => reader.auth.onChange((e) => e === 'refreshed' && resolve()));
    for (let i = 0; i < 5; i++) ids.push((await posts.create({ author: writerId, title: `while down ${i}` })).id);
    await posts.update(ids[1]!, { title: 'edited while down' });
    await refreshedWhileDown; // the access token the socket authenticated with is now an old one
    proxy.open();

    // The replay: each record changed while down once, as it is now (ids[1] created and edited:
    // one create of its edited version), in the order of their last changes.
    await until('the missed changes', () => seen.length === 6);
    ids.push((await posts.create({ author: writerId, title: 'live 2' })).id);
    await until('the live change after the reconnect', () => seen.length === 7);
    await new Promise((r) => setTimeout(r, 300)); // nothing more may arrive
    expect(snapshots).toHaveLength(1); // resumed, not started over
    expect(seen.map((e) => e.kind)).toEqual(['create', 'create', 'create', 'create', 'create', 'create', 'create']);
    const recordIds = seen.map((e) => (e.kind === 'error' || e.kind === 'snapshot' ? null : e.record.id));
    expect(recordIds).toEqual([ids[0], ids[2], ids[3], ids[4], ids[5], ids[1], ids[6]]);
    expect(seen[5]).toMatchObject({ record: { title: 'edited while down', version: 2 } });
    const seqs = seen.map((e) => (e.kind === 'error' || e.kind === 'snapshot' ? 0 : e.seq));
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    expect(new Set(seqs).size).toBe(seqs.length);

    // It reconnected and resumed, authenticating first with the session's current token.
    expect(proxy.accepted).toBeGreaterThanOrEqual(2);
    const later = sent.filter((s) => s.socket > firstSocket);
    const firstOfEachSocket = [...new Set(later.map((s) => s.socket))].map((n) => later.find((s) => s.socket === n)!.message);
    expect(firstOfEachSocket.every((m) => m.type === 'auth')).toBe(true);
    const resumed = later.find((s) => s.message.type === 'subscribe');
    expect(resumed?.message.resume_from).toEqual(expect.any(Number));
    const authOnResume = later.find((s) => s.socket === resumed!.socket && s.message.type === 'auth')!.message.token;
    const firstAuth = sent.find((s) => s.socket === firstSocket && s.message.type === 'auth')!.message.token;
    expect(authOnResume).not.toBe(firstAuth);
    stop();
    await proxy.close();
  }, 60_000);

  it('a refreshed token is sent in-band on the open socket, and events keep coming', async () => {
    const reader = client({ refreshMargin: 58 });
    await reader.auth.signIn('rt-reader@example.com', 'realtime password');
    enableRealtime(reader, { WebSocket: WS });
    const seen: RealtimeEvent<Post>[] = [];
    const socket = sockets + 1;
    const stop = reader.collection<Post>('rt_posts').where('title', '==', 'in-band').subscribe((e) => e.kind !== 'snapshot' && seen.push(e), { snapshot: true });
    await until('the subscription', () => sent.some((s) => s.socket === socket && s.message.type === 'subscribe'));
    const refreshed = await new Promise<string>((resolve) => reader.auth.onChange((e, s) => e === 'refreshed' && resolve(s!.access_token)));
    await until('the in-band auth', () => sent.some((s) => s.socket === socket && s.message.type === 'auth' && s.message.token === refreshed));
    await writer.collection<Post>('rt_posts').create({ author: writerId, title: 'in-band' });
    await until('the event', () => seen.length === 1);
    // No reconnect was needed: the subscription was sent once.
    expect(sent.filter((s) => s.message.type === 'subscribe' && JSON.stringify(s.message).includes('in-band'))).toHaveLength(1);
    stop();
  });

  it('a session ended on another device ends its subscriptions with an unauthorized error', async () => {
    const reader = client();
    await reader.auth.signUp({ email: 'rt-revoked@example.com', password: 'realtime password' });
    enableRealtime(reader, { WebSocket: WS });
    const events: RealtimeEvent<Post>[] = [];
    reader.collection<Post>('rt_posts').where('title', '==', 'revoked').subscribe((e) => events.push(e), { snapshot: true });
    await until('the snapshot', () => events.length === 1);
    const elsewhere = client();
    await elsewhere.auth.signIn('rt-revoked@example.com', 'realtime password');
    await elsewhere.auth.signOutAll();
    await until('the end of the subscription', () => events.length === 2);
    expect(events[1]).toMatchObject({ kind: 'error', error: { status: 401, code: 'unauthorized' } });
  });

  it('a refused subscription reports a typed error to its handler', async () => {
    const anon = client();
    enableRealtime(anon, { WebSocket: WS });
    const events: RealtimeEvent<Post>[] = [];
    anon.collection<Post>('rt_posts').subscribe((e) => events.push(e));
    anon.collection<Post>('no_such_collection').subscribe((e) => events.push(e));
    await until('two errors', () => events.length === 2);
    const codes = events.map((e) => (e.kind === 'error' ? [e.error.status, e.error.code] : null));
    expect(codes).toEqual(expect.arrayContaining([[403, 'forbidden'], [404, 'not_found']]));
  });

  it('without enableRealtime, subscribe says how to enable it', () => {
    expect(() => writer.collection('rt_posts').subscribe(() => undefined)).toThrow(/enableRealtime/);
  });
});
