/**
 * `expand` through the SDK against a real standalone Plinth: `Collection.get({ expand })`,
 * `Query.expand()` on a page, and a realtime snapshot over the SDK's WebSocket, each carrying
 * only the related records the signed-in user may read.
 */
import { WebSocket } from 'ws';
import { createClient, type PlinthClient, type RealtimeEvent } from '../src';
import { enableRealtime, type WebSocketConstructor } from '../src/realtime';
import { startSdkFixture, type SdkFixture } from './fixture';

interface Book {
  title: string;
  author?: string;
  reviewers?: string[];
}

describe('expand through the SDK', () => {
  let f: SdkFixture;
  let reader: PlinthClient;
  let book: string;
  let visible: string;
  beforeAll(async () => {
    f = await startSdkFixture();
    await f.admin.collections.create({ name: 'writers', fields: { name: { type: 'text' }, hidden: { type: 'boolean' } }, rules: { read: 'record.hidden != true' } });
    await f.admin.collections.create({
      name: 'books',
      fields: {
        title: { type: 'text' },
        author: { type: 'relation', collection: 'writers' },
        reviewers: { type: 'relation', collection: 'writers', max_items: 3, on_delete: 'set_null' },
      },
      rules: { read: 'auth != null' },
    });
    const admin = createClient({ url: f.url, project: f.project, key: f.sk });
    visible = (await admin.collection<{ name: string }>('writers').create({ name: 'Ann' })).id;
    const hidden = (await admin.collection<{ name: string; hidden: boolean }>('writers').create({ name: 'Hidden', hidden: true })).id;
    book = (await admin.collection<Book>('books').create({ title: 'Dune', author: hidden, reviewers: [hidden, visible] })).id;
    admin.close();
    reader = createClient({ url: f.url, project: f.project, key: f.pk });
    await reader.auth.signUp({ email: 'expand-reader@example.com', password: 'expand reader password' });
  });
  afterAll(async () => {
    reader?.close();
    await f.close();
  });

  it('get and a page carry the readable related records only', async () => {
    const got = await reader.collection<Book>('books').get(book, { expand: ['author', 'reviewers'] });
    expect(got.expand).toEqual({ reviewers: [expect.objectContaining({ id: visible, name: 'Ann' })] });
    const page = await reader.collection<Book>('books').expand('reviewers').get();
    expect(page.records[0]?.expand?.reviewers).toEqual([expect.objectContaining({ id: visible })]);
    expect(JSON.stringify(page)).not.toContain('Hidden');
  });

  it('a realtime snapshot carries them too', async () => {
    enableRealtime(reader, { WebSocket: WebSocket as unknown as WebSocketConstructor });
    const events: RealtimeEvent<Book>[] = [];
    const stop = reader.collection<Book>('books').expand('author', 'reviewers').subscribe((e) => events.push(e), { snapshot: true });
    const deadline = Date.now() + 15_000;
    while (!events.some((e) => e.kind === 'snapshot') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    stop();
    const snapshot = events.find((e) => e.kind === 'snapshot');
    expect(snapshot && snapshot.kind === 'snapshot' ? snapshot.records[0]?.expand : undefined).toEqual({ reviewers: [expect.objectContaining({ id: visible })] });
  });
});
