/**
 * Files through the gateway, in both topologies (docs/files.md): uploads with the record
 * (multipart create and update), downloads governed by the record's read rule, byte ranges,
 * ETags, thumbnails, file tokens, and the files going with their record.
 */
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import sharp from 'sharp';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { png } from '../files/file-fixtures';
import { RtClient } from '../../../realtime/test/support/rt-client';

const PASSWORD = 'files-Pa55word!';
let t: TestPlinth;
let alice: { uid: string; token: string };
let bob: { uid: string; token: string };
let photo: Buffer;

const at = (p: string): string => `/v1/projects/${t.project.id}${p}`;
const secretKey = (): string => `Bearer ${t.project.secretKey}`;
const publicKey = (): string => `Bearer ${t.project.publicKey}`;

async function signUp(email: string): Promise<{ uid: string; token: string }> {
  const res = await request(t.app).post(at('/auth/signup')).set('Authorization', publicKey()).send({ email, password: PASSWORD });
  expect(res.status).toBe(201);
  return { uid: res.body.user.id, token: res.body.access_token };
}

/** A multipart create as `user` (public key + user token). */
function upload(user: { token: string }, data: object, files: Array<[field: string, bytes: Buffer, name: string]>, collection = 'photos') {
  let r = request(t.app).post(at(`/collections/${collection}/records`)).set('Authorization', publicKey()).set('X-Db-User-Token', user.token).field('data', JSON.stringify(data));
  for (const [field, bytes, name] of files) r = r.attach(field, bytes, name);
  return r;
}

function download(recordId: string, name: string, user?: { token: string }, collection = 'photos') {
  const r = request(t.app).get(at(`/files/${collection}/${recordId}/${name}`)).set('Authorization', publicKey());
  return user ? r.set('X-Db-User-Token', user.token) : r;
}

/** Every stored file name under the data directory's file storage. */
function storedNames(): string[] {
  const root = path.join(t.dataDir, 'files', t.project.id);
  const out: string[] = [];
  const walk = (dir: string): void => {
    if (!fs.existsSync(dir)) return;
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(path.join(dir, e.name));
      else out.push(e.name);
    }
  };
  walk(root);
  return out;
}

beforeAll(async () => {
  // One realtime replica in the cluster topology: change events carry the file metadata.
  t = await startTestPlinth({ realtimeReplicas: 1 });
  await request(t.app).patch(at('/settings/auth')).set('Authorization', secretKey()).send({ enabled: true }).expect(200);
  alice = await signUp('alice@files.example');
  bob = await signUp('bob@files.example');
  const made = await request(t.app)
    .post(at('/collections'))
    .set('Authorization', secretKey())
    .send({
      name: 'photos',
      fields: {
        owner: { type: 'text' },
        title: { type: 'text' },
        cover: { type: 'file', max_size: 5 * 1024 * 1024, mime_types: ['image/png', 'image/jpeg'], thumbs: ['100x100', '0x50', '100x100f'] },
        attachments: { type: 'files', max_items: 3 },
      },
      rules: {
        read: 'auth != null && record.owner == auth.uid',
        create: 'auth != null && data.owner == auth.uid && (data.cover == null || data.cover.size < 1000000)',
        update: 'record.owner == auth.uid && data.owner == record.owner',
        delete: 'record.owner == auth.uid',
      },
    });
  expect(made.status).toBe(201);
  photo = await png(300, 200);
});
afterAll(async () => {
  await t?.close();
});

describe('upload with the record', () => {
  let id: string;
  let name: string;

  beforeAll(async () => {
    const res = await upload(alice, { owner: alice.uid, title: 'Beach' }, [['cover', photo, 'Beach 2026.PNG']]);
    expect(res.status).toBe(201);
    id = res.body.record.id;
    name = res.body.record.cover.name;
  });

  it('stores the file and puts its metadata in the record (create answer, GET)', async () => {
    const got = await request(t.app).get(at(`/collections/photos/records/${id}`)).set('Authorization', publicKey()).set('X-Db-User-Token', alice.token);
    expect(got.status).toBe(200);
    const cover = got.body.record.cover;
    expect(cover).toEqual({ name, original_name: 'Beach 2026.PNG', size: photo.length, type: 'image/png', sha256: expect.stringMatching(/^[0-9a-f]{64}$/), created_at: expect.any(String) });
    expect(name).toMatch(/^beach_2026_[a-z0-9]{10}\.png$/);
    expect(storedNames()).toContain(name);
  });

  it('serves it to the owner (200, the bytes, the safety headers), not to another user nor anonymously', async () => {
    const own = await download(id, name, alice).buffer(true);
    expect(own.status).toBe(200);
    expect(Buffer.compare(own.body as Buffer, photo)).toBe(0);
    expect(own.headers['content-type']).toBe('image/png');
    expect(own.headers['content-length']).toBe(String(photo.length));
    expect(own.headers['x-content-type-options']).toBe('nosniff');
    expect(own.headers['content-security-policy']).toMatch(/^sandbox/);
    expect((await download(id, name, bob)).status).toBe(404);
    const anonymous = await download(id, name);
    expect(anonymous.status).toBe(403);
    const noKey = await request(t.app).get(at(`/files/photos/${id}/${name}`));
    expect(noKey.status).toBe(401);
  });

  it('answers a Range with 206 and exactly those bytes, and If-None-Match with 304', async () => {
    const part = await download(id, name, alice).set('Range', 'bytes=10-29').buffer(true);
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 10-29/${photo.length}`);
    expect(Buffer.compare(part.body as Buffer, photo.subarray(10, 30))).toBe(0);
    const etag = part.headers.etag as string;
    expect((await download(id, name, alice).set('If-None-Match', etag)).status).toBe(304);
  });

  it('makes a 100×100 thumbnail of the PNG, and only sizes the field lists', async () => {
    const thumb = await download(id, `${name}?thumb=100x100`, alice).buffer(true);
    expect(thumb.status).toBe(200);
    const meta = await sharp(thumb.body as Buffer).metadata();
    expect([meta.width, meta.height, meta.format]).toEqual([100, 100, 'png']);
    expect((await download(id, `${name}?thumb=0x50`, alice).buffer(true)).status).toBe(200);
    expect((await download(id, `${name}?thumb=37x37`, alice)).status).toBe(400);
  });

  it('gives a file token that downloads without headers, bound to its user', async () => {
    const issued = await request(t.app).post(at('/files/token')).set('Authorization', publicKey()).set('X-Db-User-Token', alice.token).send({});
    expect(issued.status).toBe(200);
    expect(issued.body.token).toMatch(/^ft1\./);
    const byToken = await request(t.app).get(at(`/files/photos/${id}/${name}?token=${encodeURIComponent(issued.body.token)}`)).buffer(true);
    expect(byToken.status).toBe(200);
    expect(Buffer.compare(byToken.body as Buffer, photo)).toBe(0);
    const bobs = await request(t.app).post(at('/files/token')).set('Authorization', publicKey()).set('X-Db-User-Token', bob.token).send({});
    expect((await request(t.app).get(at(`/files/photos/${id}/${name}?token=${encodeURIComponent(bobs.body.token)}`))).status).toBe(404);
    expect((await request(t.app).get(at(`/files/photos/${id}/${name}?token=ft1.forged.token`))).status).toBe(401);
  });

  it('a file token ends with the session it was asked under (sign-out-all)', async () => {
    const carol = await signUp('carol@files.example');
    const made = await upload(carol, { owner: carol.uid, title: 'Mine' }, [['cover', photo, 'mine.png']]);
    expect(made.status).toBe(201);
    const url = (token: string): string => at(`/files/photos/${made.body.record.id}/${made.body.record.cover.name}?token=${encodeURIComponent(token)}`);
    const issued = await request(t.app).post(at('/files/token')).set('Authorization', publicKey()).set('X-Db-User-Token', carol.token).send({});
    expect((await request(t.app).get(url(issued.body.token))).status).toBe(200);
    const out = await request(t.app).post(at('/auth/signout-all')).set('Authorization', publicKey()).set('X-Auth-User-Token', carol.token);
    expect(out.status).toBe(200);
    const after = await request(t.app).get(url(issued.body.token));
    expect(after.status).toBe(401);
    expect(after.body.message).toContain('has ended');
  });
});

describe('rules, updates and deletes', () => {
  it('lets the create rule see the file metadata (data.cover.size)', async () => {
    const noisy = await sharp(Buffer.alloc(700 * 700 * 3, 0).map((_, i) => (i * 7919) % 251), { raw: { width: 700, height: 700, channels: 3 } }).png({ compressionLevel: 0 }).toBuffer();
    expect(noisy.length).toBeGreaterThan(1_000_000);
    const res = await upload(alice, { owner: alice.uid }, [['cover', noisy, 'noisy.png']]);
    expect(res.status).toBe(403);
    expect(storedNames().some((n) => n.startsWith('noisy_'))).toBe(false);
  });

  it('adds files on update, removes one when the field is set without it, and deletes them all with the record', async () => {
    const created = await upload(alice, { owner: alice.uid }, [
      ['attachments', Buffer.from('first notes\n'), 'a.txt'],
      ['attachments', Buffer.from('second notes\n'), 'b.txt'],
    ]);
    expect(created.status).toBe(201);
    const [a, b] = created.body.record.attachments as Array<{ name: string; type: string }>;
    expect(a!.type).toBe('text/plain');
    const added = await request(t.app)
      .patch(at(`/collections/photos/records/${created.body.record.id}`))
      .set('Authorization', publicKey())
      .set('X-Db-User-Token', alice.token)
      .field('data', JSON.stringify({}))
      .attach('attachments', Buffer.from('third\n'), 'c.txt');
    expect(added.status).toBe(200);
    expect(added.body.record.attachments).toHaveLength(3);
    const c = added.body.record.attachments[2].name as string;
    const removed = await request(t.app)
      .patch(at(`/collections/photos/records/${created.body.record.id}`))
      .set('Authorization', publicKey())
      .set('X-Db-User-Token', alice.token)
      .send({ data: { attachments: [a!.name, c] } });
    expect(removed.status).toBe(200);
    expect(removed.body.record.attachments.map((m: { name: string }) => m.name)).toEqual([a!.name, c]);
    expect(storedNames()).not.toContain(b!.name);
    expect((await download(created.body.record.id, b!.name, alice)).status).toBe(404);
    const forged = await request(t.app)
      .patch(at(`/collections/photos/records/${created.body.record.id}`))
      .set('Authorization', publicKey())
      .set('X-Db-User-Token', alice.token)
      .send({ data: { attachments: [{ name: 'passwd_aaaaaaaaaa.txt', size: 1, type: 'text/plain', sha256: 'x' }] } });
    expect(forged.status).toBe(400);
    const gone = await request(t.app).delete(at(`/collections/photos/records/${created.body.record.id}`)).set('Authorization', publicKey()).set('X-Db-User-Token', alice.token);
    expect(gone.status).toBe(200);
    expect(storedNames()).not.toContain(a!.name);
    expect(storedNames()).not.toContain(c);
  });
});

describe('files go with their collection and project', () => {
  it('deleting a collection deletes its files; deleting the project purges the rest', async () => {
    const admin = `Bearer ${t.adminKey}`;
    const other = await t.createProject();
    const call = (method: 'post' | 'delete', p: string) => request(t.app)[method](`/v1/projects/${other.id}${p}`).set('Authorization', `Bearer ${other.secretKey}`);
    const root = path.join(t.dataDir, 'files', other.id);
    for (const name of ['keep', 'drop']) {
      expect((await call('post', '/collections').send({ name, fields: { doc: { type: 'file' } } })).status).toBe(201);
      expect((await call('post', `/collections/${name}/records`).field('data', '{}').attach('doc', Buffer.from(`${name} me\n`), `${name}.txt`)).status).toBe(201);
    }
    expect(fs.readdirSync(root).sort()).toEqual(['drop', 'keep']);
    expect((await call('delete', '/collections/drop')).status).toBe(200);
    expect(fs.readdirSync(root).filter((d) => fs.readdirSync(path.join(root, d)).length > 0)).toEqual(['keep']);
    const del = await request(t.app).delete(`/v1/admin/projects/${other.id}`).set('Authorization', admin);
    expect(del.status).toBe(200);
    const left = fs.existsSync(root) ? fs.readdirSync(root).filter((d) => fs.readdirSync(path.join(root, d)).length > 0) : [];
    expect(left).toEqual([]);
  });
});

describe('realtime', () => {
  it('change events carry the file metadata', async () => {
    const rt = await RtClient.connect(await t.url(), t.project.id, { queryKey: t.project.publicKey });
    try {
      rt.send({ type: 'auth', token: alice.token });
      await rt.next((m) => m.type === 'auth_ok');
      expect(await rt.subscribe('mine', { collection: 'photos' })).toMatchObject({ type: 'subscribed' });
      const made = await upload(alice, { owner: alice.uid, title: 'Live' }, [['cover', photo, 'live.png']]);
      expect(made.status).toBe(201);
      const events = await rt.waitForEvents('mine', 1);
      const created = events.find((e) => e.record.id === made.body.record.id);
      expect((created?.record as { cover?: unknown } | undefined)?.cover).toEqual(made.body.record.cover);
    } finally {
      rt.close();
    }
  });
});
