import sharp from 'sharp';
import { createClient, PlinthError, type FileMeta, type PlinthClient, type UploadProgress } from '../src';
import { startSdkFixture, type SdkFixture } from './fixture';

interface Doc {
  owner: string;
  title?: string;
  cover?: FileMeta;
  attachments?: FileMeta[];
}

/** Files through the SDK against a real standalone Plinth: upload with a record, URLs, tokens, thumbnails, rules. */
describe('@plinth/client files', () => {
  let f: SdkFixture;
  let alice: PlinthClient;
  let bob: PlinthClient;
  let uid: string;
  let png: Buffer;

  beforeAll(async () => {
    f = await startSdkFixture();
    await f.admin.collections.create({
      name: 'docs',
      fields: {
        owner: { type: 'text', required: true },
        title: { type: 'text' },
        cover: { type: 'file', mime_types: ['image/*'], thumbs: ['16x16'] },
        attachments: { type: 'files', max_items: 3 },
      },
      rules: { read: 'record.owner == auth.uid', create: 'data.owner == auth.uid', update: 'record.owner == auth.uid' },
    });
    alice = createClient({ url: f.url, project: f.project, key: f.pk });
    bob = createClient({ url: f.url, project: f.project, key: f.pk });
    uid = (await alice.auth.signUp({ email: 'files-alice@example.com', password: 'files password a' })).user.id;
    await bob.auth.signUp({ email: 'files-bob@example.com', password: 'files password b' });
    png = await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 0, g: 90, b: 200 } } }).png().toBuffer();
  }, 30_000);
  afterAll(async () => {
    alice.close();
    bob.close();
    await f.close();
  });

  it('creates a record with a file; the field holds its metadata and fileUrl serves its bytes with the key and user token', async () => {
    const progress: UploadProgress[] = [];
    const doc = await alice.collection<Doc>('docs').create(
      { owner: uid, title: 'with cover' },
      { files: { cover: new File([png], 'Blue Cover.PNG', { type: 'image/png' }) }, onProgress: (p) => progress.push(p) },
    );
    expect(doc).toMatchObject({ owner: uid, title: 'with cover', cover: { type: 'image/png', size: png.length, sha256: expect.stringMatching(/^[0-9a-f]{64}$/), created_at: expect.any(String) } });
    expect(doc.cover!.name).toMatch(/^blue_cover_[a-z0-9]{10}\.png$/);
    // fetch reports no upload progress in Node: one event once the body was sent.
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress.at(-1)!.loaded).toBe(progress.at(-1)!.total);

    const url = alice.collection('docs').fileUrl(doc, 'cover');
    expect(url).toBe(`${f.url}/v1/projects/${f.project}/files/docs/${doc.id}/${doc.cover!.name}`);
    const token = await alice.records.token();
    const res = await fetch(url, { headers: { Authorization: `Bearer ${f.pk}`, 'X-Db-User-Token': token! } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^image\/png/);
    expect(Buffer.from(await res.arrayBuffer()).equals(png)).toBe(true);
  });

  it('a file token lets a plain URL (as <img src>) fetch the file and its thumbnail; another user’s token does not', async () => {
    const docs = alice.collection<Doc>('docs');
    const doc = await docs.create({ owner: uid }, { files: { cover: new Blob([png]) } });
    const ft = await alice.files.token();
    expect(ft).toMatchObject({ token: expect.any(String), expires_at: expect.any(String) });
    expect(Date.parse(ft.expires_at)).toBeGreaterThan(Date.now());

    const whole = await fetch(docs.fileUrl(doc, 'cover', doc.cover!, { token: ft }));
    expect(whole.status).toBe(200);
    expect(Buffer.from(await whole.arrayBuffer()).equals(png)).toBe(true);

    const thumb = await fetch(docs.fileUrl(doc, 'cover', doc.cover!.name, { token: ft.token, thumb: '16x16' }));
    expect(thumb.status).toBe(200);
    expect(await sharp(Buffer.from(await thumb.arrayBuffer())).metadata()).toMatchObject({ width: 16, height: 16 });

    const short = await alice.files.token({ ttlSeconds: 30 });
    expect(Date.parse(short.expires_at) - Date.now()).toBeLessThanOrEqual(31_000);
    expect((await fetch(docs.fileUrl(doc, 'cover', undefined, { token: short }))).status).toBe(200);

    const bobs = await bob.files.token();
    const denied = await fetch(docs.fileUrl(doc, 'cover', undefined, { token: bobs }));
    expect([403, 404]).toContain(denied.status);
    expect(await denied.json()).toMatchObject({ error: expect.any(String), message: expect.any(String) });
  });

  it('update adds files to a files field; the answer lists each, and each URL serves its own bytes', async () => {
    const docs = alice.collection<Doc>('docs');
    const doc = await docs.create({ owner: uid, title: 'attachments' });
    const a = new File(['first attachment'], 'a.txt', { type: 'text/plain' });
    const b = new File(['{"second": true}'], 'b.json', { type: 'application/json' });
    const updated = await docs.update(doc.id, { title: 'two attachments' }, { files: { attachments: [a, b] } });
    expect(updated.title).toBe('two attachments');
    expect(updated.attachments).toHaveLength(2);
    expect(updated.attachments!.map((x) => x.type)).toEqual(['text/plain', 'application/json']);
    const ft = await alice.files.token();
    const bodies = await Promise.all(updated.attachments!.map(async (m) => (await fetch(docs.fileUrl(updated, 'attachments', m, { token: ft }))).text()));
    expect(bodies).toEqual(['first attachment', '{"second": true}']);
  });

  it('a file the field refuses is a PlinthError with the server’s status; fileUrl refuses a name the record does not hold', async () => {
    const docs = alice.collection<Doc>('docs');
    const html = new File(['<!doctype html><p>not an image</p>'], 'x.png', { type: 'image/png' });
    const refused = docs.create({ owner: uid }, { files: { cover: html } });
    await expect(refused).rejects.toBeInstanceOf(PlinthError);
    await expect(refused).rejects.toMatchObject({ status: 400, details: { field: 'cover', type: 'text/html' } });

    const doc = await docs.create({ owner: uid }, { files: { cover: new Blob([png]) } });
    expect(() => docs.fileUrl(doc, 'cover', 'other_0123456789.png')).toThrow(TypeError);
    expect(() => docs.fileUrl(doc, 'attachments')).toThrow(TypeError);
  });
});
