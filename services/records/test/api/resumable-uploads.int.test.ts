/**
 * Resumable uploads through the gateway, in both topologies (docs/files.md "Resumable uploads"):
 * a part whose connection drops half-way is not kept and is sent again; completion attaches the
 * file under the update rule; a session is its opener's alone.
 */
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import request from 'supertest';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { png } from '../files/file-fixtures';

const MiB = 1024 * 1024;
const PASSWORD = 'resumable-Pa55word!';
let t: TestPlinth;
let base: string;
let alice: { uid: string; token: string };
let bob: { uid: string; token: string };

const at = (p: string): string => `/v1/projects/${t.project.id}${p}`;
const as = (user: { token: string }) => ({ Authorization: `Bearer ${t.project.publicKey}`, 'X-Db-User-Token': user.token });

async function signUp(email: string): Promise<{ uid: string; token: string }> {
  const res = await request(t.app).post(at('/auth/signup')).set('Authorization', `Bearer ${t.project.publicKey}`).send({ email, password: PASSWORD });
  expect(res.status).toBe(201);
  return { uid: res.body.user.id, token: res.body.access_token };
}

/** PUT a part over a real socket; with `cut`, only its first half is sent before the connection drops. */
function putPart(user: { token: string }, upload: string, n: number, bytes: Buffer, cut = false): Promise<{ status: number; body: unknown } | 'dropped'> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${at(`/files/uploads/${upload}/parts/${n}`)}`, {
      method: 'PUT',
      headers: { ...as(user), 'Content-Type': 'application/octet-stream', 'Content-Length': String(bytes.length) },
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as unknown }));
    });
    if (!cut) return void req.on('error', reject).end(bytes);
    req.on('error', () => resolve('dropped'));
    req.write(bytes.subarray(0, bytes.length >> 1), () => setTimeout(() => {
      req.destroy();
      resolve('dropped');
    }, 100));
  });
}

beforeAll(async () => {
  t = await startTestPlinth();
  base = await t.url();
  await request(t.app).patch(at('/settings/auth')).set('Authorization', `Bearer ${t.project.secretKey}`).send({ enabled: true }).expect(200);
  alice = await signUp('alice@resumable.example');
  bob = await signUp('bob@resumable.example');
  for (const [name, update] of [['clips', 'record.owner == auth.uid'], ['frozen', 'false']] as const) {
    await request(t.app)
      .post(at('/collections'))
      .set('Authorization', `Bearer ${t.project.secretKey}`)
      .send({ name, fields: { owner: { type: 'text' }, clip: { type: 'file', max_size: 20 * MiB, mime_types: ['image/png'] } }, rules: { read: 'record.owner == auth.uid', create: 'data.owner == auth.uid', update } })
      .expect(201);
  }
}, 60_000);
afterAll(async () => {
  await t?.close();
});

async function recordOf(user: { uid: string; token: string }, collection: string): Promise<string> {
  const res = await request(t.app).post(at(`/collections/${collection}/records`)).set(as(user)).send({ data: { owner: user.uid } });
  expect(res.status).toBe(201);
  return res.body.record.id;
}

async function open(user: { token: string }, collection: string, recordId: string, size: number) {
  return request(t.app).post(at('/files/uploads')).set(as(user)).send({ collection, record_id: recordId, field: 'clip', name: 'Clip.png', size });
}

it('a part cut off mid-way is not kept; sent again, completion attaches the original file to the record', async () => {
  const file = Buffer.concat([await png(8, 8), randomBytes(5 * MiB + 1000)]);
  const id = await recordOf(alice, 'clips');
  const opened = await open(alice, 'clips', id, file.length);
  expect(opened.status).toBe(201);
  expect(opened.body.upload).toMatchObject({ id: expect.stringMatching(/^up_/), part_size: 5 * MiB, parts: 2, size: file.length });
  const up = opened.body.upload.id as string;

  expect(await putPart(alice, up, 1, file.subarray(0, 5 * MiB))).toMatchObject({ status: 200, body: { part: 1, size: 5 * MiB } });
  expect(await putPart(alice, up, 2, file.subarray(5 * MiB), true)).toBe('dropped');
  const status = await request(t.app).get(at(`/files/uploads/${up}`)).set(as(alice));
  expect(status.status).toBe(200);
  expect(status.body.received).toEqual([1]);
  const early = await request(t.app).post(at(`/files/uploads/${up}/complete`)).set(as(alice));
  expect(early.status).toBe(409);
  expect(early.body.details).toEqual({ missing: [2] });

  expect(await putPart(alice, up, 2, file.subarray(5 * MiB))).toMatchObject({ status: 200, body: { part: 2 } });
  const done = await request(t.app).post(at(`/files/uploads/${up}/complete`)).set(as(alice));
  expect(done.status).toBe(200);
  expect(done.body.record).toMatchObject({ id, clip: { size: file.length, type: 'image/png', original_name: 'Clip.png', sha256: createHash('sha256').update(file).digest('hex') } });

  const got = await request(t.app).get(at(`/files/clips/${id}/${done.body.record.clip.name}`)).set(as(alice)).buffer(true).parse((res, cb) => {
    const parts: Buffer[] = [];
    res.on('data', (c: Buffer) => parts.push(c));
    res.on('end', () => cb(null, Buffer.concat(parts)));
  });
  expect(got.status).toBe(200);
  expect((got.body as Buffer).equals(file)).toBe(true);
  expect((await request(t.app).get(at(`/files/uploads/${up}`)).set(as(alice))).status).toBe(404);
});

it("a session is its opener's: another user can neither open one on a record they cannot read nor use one", async () => {
  const id = await recordOf(alice, 'clips');
  expect((await open(bob, 'clips', id, 1000)).status).toBe(404);
  const up = (await open(alice, 'clips', id, 1000)).body.upload.id as string;
  expect((await request(t.app).get(at(`/files/uploads/${up}`)).set(as(bob))).status).toBe(404);
  expect(await putPart(bob, up, 1, Buffer.alloc(1000))).toMatchObject({ status: 404 });
  expect((await request(t.app).post(at(`/files/uploads/${up}/complete`)).set(as(bob))).status).toBe(404);
  expect((await request(t.app).delete(at(`/files/uploads/${up}`)).set(as(alice))).status).toBe(200);
});

it('completion is judged by the update rule: refused, the record keeps no file', async () => {
  const id = await recordOf(alice, 'frozen');
  const file = await png(8, 8);
  const up = (await open(alice, 'frozen', id, file.length)).body.upload.id as string;
  expect(await putPart(alice, up, 1, file)).toMatchObject({ status: 200 });
  const refused = await request(t.app).post(at(`/files/uploads/${up}/complete`)).set(as(alice));
  expect(refused.status).toBe(403);
  const record = await request(t.app).get(at(`/collections/frozen/records/${id}`)).set(as(alice));
  expect(record.body.record.clip).toBeUndefined();
});

it('bad sessions are 4xx before any byte is kept: too large, not a file field, a part of the wrong size', async () => {
  const id = await recordOf(alice, 'clips');
  const big = await open(alice, 'clips', id, 21 * MiB);
  expect(big.status).toBe(413);
  const notFile = await request(t.app).post(at('/files/uploads')).set(as(alice)).send({ collection: 'clips', record_id: id, field: 'owner', name: 'x', size: 10 });
  expect(notFile.status).toBe(400);
  const up = (await open(alice, 'clips', id, 1000)).body.upload.id as string;
  expect(await putPart(alice, up, 1, Buffer.alloc(999))).toMatchObject({ status: 400, body: { details: { part: 1, expected: 1000, received: 999 } } });
  expect(await putPart(alice, up, 1, Buffer.alloc(1001))).toMatchObject({ status: 413 });
  expect(await putPart(alice, up, 2, Buffer.alloc(10))).toMatchObject({ status: 400 });
  expect((await request(t.app).get(at(`/files/uploads/${up}`)).set(as(alice))).body.received).toEqual([]);
});
