import { WebSocket } from 'ws';
import { createClient, PlinthError, type PlinthClient, type RealtimeEvent } from '../src';
import { enableRealtime, type WebSocketConstructor } from '../src/realtime';
import { startSdkFixture, type SdkFixture } from './fixture';

interface Post {
  owner: string;
  title?: string;
  body?: string;
}

/** Text search through the SDK against a real standalone Plinth: the text operators and `search`. */
describe('@plinth/client text search', () => {
  let f: SdkFixture;
  let client: PlinthClient;
  let uid: string;

  beforeAll(async () => {
    f = await startSdkFixture();
    await f.admin.collections.create({
      name: 'posts',
      fields: { owner: { type: 'text', required: true, indexed: true }, title: { type: 'text', searchable: true }, body: { type: 'text', searchable: true } },
      rules: { read: 'record.owner == auth.uid', create: 'data.owner == auth.uid' },
    });
    client = createClient({ url: f.url, project: f.project, key: f.pk });
    uid = (await client.auth.signUp({ email: 'search@example.com', password: 'search password' })).user.id;
    const posts = client.collection<Post>('posts');
    for (const [title, body] of [['Rust basics', 'ownership'], ['Advanced Rust', 'rust macros, rust traits'], ['Go', 'channels and rust-free code']]) {
      await posts.create({ owner: uid, title, body });
    }
  });
  afterAll(async () => {
    client.close();
    await f.close();
  });

  it('where with contains and starts-with, ignoring ASCII case', async () => {
    const posts = client.collection<Post>('posts');
    expect((await posts.where('title', 'contains', 'RUST').get()).records.map((r) => r.title)).toEqual(['Rust basics', 'Advanced Rust']);
    expect((await posts.where('title', 'starts-with', 'adv').get()).records.map((r) => r.title)).toEqual(['Advanced Rust']);
  });

  it('search: ranked pages, every page followed, counted', async () => {
    const posts = client.collection<Post>('posts');
    const page = await posts.search('rust').limit(2).get({ count: true });
    expect(page.total).toBe(3);
    expect(page.records[0]?.title).toBe('Advanced Rust');
    const all: string[] = [];
    for await (const r of posts.search('rust').limit(1)) all.push(r.title ?? '');
    expect(all.sort()).toEqual(['Advanced Rust', 'Go', 'Rust basics']);
    expect(await posts.search('rust macros').count()).toBe(1);
    expect((await posts.query().get({ search: 'ownership' })).records.map((r) => r.title)).toEqual(['Rust basics']);
  });

  it('a bad search is a PlinthError naming it; aggregate counts a search; subscribe refuses one', async () => {
    const posts = client.collection<Post>('posts');
    const err = await posts.search('***').get().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlinthError);
    expect((err as PlinthError).status).toBe(400);
    expect((err as PlinthError).details).toMatchObject({ parameter: 'search' });
    expect(await posts.search('rust').where('title', 'starts-with', 'r').aggregate({ count: true })).toEqual({ count: 1 });
    expect(() => posts.search('rust').subscribe(() => {})).toThrow(/full-text search/);
  });

  it('a realtime subscription with contains and starts-with matches events as a list matches records', async () => {
    const reader = createClient({ url: f.url, project: f.project, key: f.pk });
    try {
      await reader.auth.signIn('search@example.com', 'search password');
      enableRealtime(reader, { WebSocket: WebSocket as unknown as WebSocketConstructor });
      const seen: RealtimeEvent<Post>[] = [];
      const stop = reader.collection<Post>('posts').where('title', 'contains', 'LIVE').where('body', 'starts-with', 'A_').subscribe((e) => seen.push(e), { snapshot: true });
      const deadline = Date.now() + 15_000;
      const until = async (n: number) => {
        while (seen.length < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      };
      await until(1);
      expect(seen[0]).toMatchObject({ kind: 'snapshot', records: [] });
      const posts = client.collection<Post>('posts');
      await posts.create({ owner: uid, title: 'not matching', body: 'a_b' });
      await posts.create({ owner: uid, title: 'live but', body: 'aXb: _ is not a wildcard' });
      await posts.create({ owner: uid, title: 'ÉLIVE', body: 'non-ASCII is not folded' });
      const hit = await posts.create({ owner: uid, title: 'Going LiVe', body: 'A_B' });
      await until(2);
      await new Promise((r) => setTimeout(r, 300));
      expect(seen.slice(1).map((e) => (e.kind === 'create' ? e.record.title : e.kind))).toEqual([hit.title]);
      const listed = await posts.where('title', 'contains', 'LIVE').where('body', 'starts-with', 'A_').get();
      expect(listed.records.map((r) => r.id)).toEqual([hit.id]);
      stop();
    } finally {
      reader.close();
    }
  });
});
