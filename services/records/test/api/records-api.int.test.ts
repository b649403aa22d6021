/** Records through the real gateway: contract §4 (Records), §3 (record version), docs/records.md. */
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { client, type Client } from './client';

let t: TestPlinth;
let api: Client;

const FIELDS = {
  title: { type: 'text', required: true },
  owner: { type: 'text', indexed: true },
  email: { type: 'text', unique: true },
  priority: { type: 'integer' },
  price: { type: 'number' },
  done: { type: 'boolean' },
  due: { type: 'timestamp' },
  tags: { type: 'list' },
  meta: { type: 'json' },
};

beforeAll(async () => {
  t = await startTestPlinth();
  api = client(t);
  await api.post('/collections', { name: 'tasks', fields: FIELDS }).expect(201);
});
afterAll(() => t.close());

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function create(data: object): Promise<{ id: string; version: number; [k: string]: unknown }> {
  const res = await api.post('/collections/tasks/records', { data });
  expect(res.status).toBe(201);
  return res.body.record;
}

async function count(where: unknown[] = []): Promise<number> {
  const res = await api.get(`/collections/tasks/records?limit=1000&where=${encodeURIComponent(JSON.stringify(where))}`);
  return res.body.records.length;
}

describe('create and get', () => {
  it('POST → 201 {record} with a rec_ id, version 1, timestamps and the user fields at the top level', async () => {
    const data = {
      title: 'write docs',
      owner: 'u1',
      priority: 2,
      price: 9.5,
      done: false,
      due: '2026-03-01T10:00:00+02:00',
      tags: ['a', 1, true],
      meta: { nested: [1, { x: null }] },
    };
    const res = await api.post('/collections/tasks/records', { data });
    expect(res.status).toBe(201);
    const { record } = res.body;
    expect(record).toEqual({
      id: expect.stringMatching(/^rec_[0-9a-z]{26}$/),
      version: 1,
      created_at: expect.stringMatching(ISO),
      updated_at: record.created_at,
      ...data,
      due: '2026-03-01T08:00:00.000Z',
    });
    const got = await api.get(`/collections/tasks/records/${record.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ record });
  });

  it('GET of an unknown record or collection → 404', async () => {
    expect((await api.get('/collections/tasks/records/rec_nothing')).status).toBe(404);
    const res = await api.get('/collections/ghosts/records/rec_nothing');
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('not_found');
    expect((await api.post('/collections/ghosts/records', { data: {} })).status).toBe(404);
  });

  const INVALID: Array<[string, unknown, { [k: string]: unknown }]> = [
    ['an unknown field', { title: 't', colour: 'red' }, { field: 'colour' }],
    ['a $-prefixed field', { title: 't', $set: { title: 'x' } }, { field: '$set' }],
    ['a missing required field', { owner: 'u1' }, { field: 'title', reason: 'required' }],
    ['text given a number', { title: 5 }, { field: 'title', expected: 'text' }],
    ['integer given 1.5', { title: 't', priority: 1.5 }, { field: 'priority', expected: 'integer' }],
    ['integer given "2"', { title: 't', priority: '2' }, { field: 'priority', expected: 'integer' }],
    ['number given a string', { title: 't', price: '9.5' }, { field: 'price', expected: 'number' }],
    ['boolean given "true"', { title: 't', done: 'true' }, { field: 'done', expected: 'boolean' }],
    ['timestamp without a time zone', { title: 't', due: '2026-03-01 10:00' }, { field: 'due', expected: 'timestamp' }],
    ['timestamp that is no date', { title: 't', due: '2026-13-45T10:00:00Z' }, { field: 'due', expected: 'timestamp' }],
    ['list given an object', { title: 't', tags: { a: 1 } }, { field: 'tags', expected: 'list' }],
    ['list holding an object', { title: 't', tags: [{ $ne: null }] }, { field: 'tags', expected: 'list' }],
    ['json with a key MongoDB reserves (_bsontype)', { title: 't', meta: { n: { _bsontype: 'Long' } } }, { field: 'meta' }],
    ['json shaped like a MongoDB DBRef', { title: 't', meta: { $ref: 'users', $id: 'u1' } }, { field: 'meta' }],
    ['text given an operator object', { title: { $ne: null } }, { field: 'title', expected: 'text' }],
    ['data not an object', ['title'], { field: 'data' }],
  ];
  it.each(INVALID)('refuses %s → 400 naming the field, and stores nothing', async (_label, data, details) => {
    const before = await count();
    const res = await api.post('/collections/tasks/records', { data });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_request', details });
    expect(await count()).toBe(before);
  });

  it('refuses an unknown body parameter and a non-JSON body', async () => {
    const res = await api.post('/collections/tasks/records', { data: { title: 't' }, version: 3 });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual({ field: 'version' });
    // A form body is refused before it is read: only collection creation takes forms.
    const form = await api.postForm('/collections/tasks/records', { data: 'x' });
    expect(form.status).toBe(415);
    expect(form.body).toMatchObject({ error: 'unsupported_media_type' });
  });

  it('a duplicate value of a unique field → 409 naming the field', async () => {
    await create({ title: 'a', email: 'dup@example.com' });
    const res = await api.post('/collections/tasks/records', { data: { title: 'b', email: 'dup@example.com' } });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ error: 'conflict', details: { field: 'email' } });
    expect(await count([['email', '==', 'dup@example.com']])).toBe(1);
  });
});

describe('update (PATCH)', () => {
  it('merges data, null removes an optional field, version +1 on every update', async () => {
    const r = await create({ title: 'first', owner: 'u1', priority: 1, tags: ['x'] });
    const one = await api.patch(`/collections/tasks/records/${r.id}`, { data: { priority: 5, owner: null } });
    expect(one.status).toBe(200);
    expect(one.body.record).toEqual({
      id: r.id,
      version: 2,
      created_at: r.created_at,
      updated_at: expect.stringMatching(ISO),
      title: 'first',
      priority: 5,
      tags: ['x'],
    });
    const two = await api.patch(`/collections/tasks/records/${r.id}`, { data: {} });
    expect(two.body.record.version).toBe(3);
    expect((await api.get(`/collections/tasks/records/${r.id}`)).body.record).toEqual(two.body.record);
  });

  it('with the current version → 200; with a stale version → 409 {error:"conflict", details:{current_version}}', async () => {
    const r = await create({ title: 'v' });
    const ok = await api.patch(`/collections/tasks/records/${r.id}`, { data: { title: 'v2' }, version: 1 });
    expect(ok.status).toBe(200);
    expect(ok.body.record.version).toBe(2);
    const stale = await api.patch(`/collections/tasks/records/${r.id}`, { data: { title: 'v3' }, version: 1 });
    expect(stale.status).toBe(409);
    expect(stale.body).toEqual({ error: 'conflict', message: expect.any(String), details: { current_version: 2 } });
    expect((await api.get(`/collections/tasks/records/${r.id}`)).body.record.title).toBe('v2');
  });

  it('two concurrent patches with the same version → exactly one 200 and one 409', async () => {
    const r = await create({ title: 'race' });
    const [a, b] = await Promise.all([
      api.patch(`/collections/tasks/records/${r.id}`, { data: { title: 'A' }, version: 1 }),
      api.patch(`/collections/tasks/records/${r.id}`, { data: { title: 'B' }, version: 1 }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const winner = a.status === 200 ? a : b;
    const stored = (await api.get(`/collections/tasks/records/${r.id}`)).body.record;
    expect(stored).toMatchObject({ version: 2, title: winner.body.record.title });
  });

  it('concurrent patches without a version all apply, each bumping the version once', async () => {
    const r = await create({ title: 'many', priority: 0 });
    const results = await Promise.all([1, 2, 3, 4].map((p) => api.patch(`/collections/tasks/records/${r.id}`, { data: { priority: p } })));
    expect(results.map((x) => x.status)).toEqual([200, 200, 200, 200]);
    expect(results.map((x) => x.body.record.version).sort()).toEqual([2, 3, 4, 5]);
    expect((await api.get(`/collections/tasks/records/${r.id}`)).body.record.version).toBe(5);
  });

  const BAD_PATCHES: Array<[string, object, { [k: string]: unknown }]> = [
    ['null on a required field', { data: { title: null } }, { field: 'title', reason: 'required' }],
    ['an unknown field', { data: { nope: 1 } }, { field: 'nope' }],
    ['a wrong type', { data: { done: 1 } }, { field: 'done', expected: 'boolean' }],
    ['a version that is not a positive integer', { data: {}, version: '1' }, { field: 'version' }],
    ['an unknown parameter', { data: {}, id: 'rec_x' }, { field: 'id' }],
  ];
  it.each(BAD_PATCHES)('refuses %s → 400, record unchanged', async (_label, body, details) => {
    const r = await create({ title: 'keep', done: true });
    const res = await api.patch(`/collections/tasks/records/${r.id}`, body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_request', details });
    expect((await api.get(`/collections/tasks/records/${r.id}`)).body.record).toEqual(r);
  });

  it('a patch making a unique value collide → 409, record unchanged', async () => {
    await create({ title: 'a', email: 'taken@example.com' });
    const r = await create({ title: 'b', email: 'free@example.com' });
    const res = await api.patch(`/collections/tasks/records/${r.id}`, { data: { email: 'taken@example.com' } });
    expect(res.status).toBe(409);
    expect(res.body.details).toEqual({ field: 'email' });
    expect((await api.get(`/collections/tasks/records/${r.id}`)).body.record).toEqual(r);
  });

  it('PATCH of an unknown record → 404', async () => {
    expect((await api.patch('/collections/tasks/records/rec_missing', { data: {} })).status).toBe(404);
  });
});

describe('delete', () => {
  it('→ 200 {deleted:true, id}; the record is gone', async () => {
    const r = await create({ title: 'bye' });
    const res = await api.delete(`/collections/tasks/records/${r.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ deleted: true, id: r.id });
    expect((await api.get(`/collections/tasks/records/${r.id}`)).status).toBe(404);
    expect((await api.delete(`/collections/tasks/records/${r.id}`)).status).toBe(404);
  });

  it('?version= is a precondition: stale → 409 with current_version, current → 200, malformed → 400', async () => {
    const r = await create({ title: 'guarded' });
    await api.patch(`/collections/tasks/records/${r.id}`, { data: { title: 'g2' } }).expect(200);
    const stale = await api.delete(`/collections/tasks/records/${r.id}?version=1`);
    expect(stale.status).toBe(409);
    expect(stale.body.details).toEqual({ current_version: 2 });
    expect((await api.delete(`/collections/tasks/records/${r.id}?version=abc`)).status).toBe(400);
    expect((await api.get(`/collections/tasks/records/${r.id}`)).status).toBe(200);
    expect((await api.delete(`/collections/tasks/records/${r.id}?version=2`)).status).toBe(200);
    expect((await api.get(`/collections/tasks/records/${r.id}`)).status).toBe(404);
  });
});

describe('Idempotency-Key on create', () => {
  const post = (key: string, data: object) => api.post('/collections/tasks/records', { data }).set('Idempotency-Key', key);

  it('same key and body twice → the same 201 response and one record', async () => {
    const data = { title: 'once', owner: 'idem-1' };
    const first = await post('key-1', data);
    const second = await post('key-1', data);
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(await count([['owner', '==', 'idem-1']])).toBe(1);
  });

  it('the same body with keys in another order is the same request', async () => {
    const first = await post('key-order', { title: 'o', owner: 'idem-2' });
    const second = await post('key-order', { owner: 'idem-2', title: 'o' });
    expect(second.body).toEqual(first.body);
    expect(await count([['owner', '==', 'idem-2']])).toBe(1);
  });

  it('same key with another body → 409, nothing stored', async () => {
    await post('key-2', { title: 'one', owner: 'idem-3' }).expect(201);
    const res = await post('key-2', { title: 'two', owner: 'idem-3' });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('conflict');
    expect(await count([['owner', '==', 'idem-3']])).toBe(1);
  });

  it('without a key, two identical posts make two records; a malformed key → 400', async () => {
    await create({ title: 'twin', owner: 'idem-4' });
    await create({ title: 'twin', owner: 'idem-4' });
    expect(await count([['owner', '==', 'idem-4']])).toBe(2);
    const bad = await post('a key with spaces', { title: 'x' });
    expect(bad.status).toBe(400);
    expect(bad.body.details).toEqual({ header: 'Idempotency-Key' });
  });
});

describe('public key on a collection without rules (a missing rule denies)', () => {
  it('every record operation with a public key → 403 forbidden, and nothing changes', async () => {
    const r = await create({ title: 'private' });
    const tries = [
      api.get('/collections/tasks/records', 'public'),
      api.get(`/collections/tasks/records/${r.id}`, 'public'),
      api.post('/collections/tasks/records', { data: { title: 'x' } }, 'public'),
      api.patch(`/collections/tasks/records/${r.id}`, { data: { title: 'x' } }, 'public'),
      api.delete(`/collections/tasks/records/${r.id}`, 'public'),
    ];
    for (const res of await Promise.all(tries)) {
      expect(res.status).toBe(403);
      expect(res.body.error).toBe('forbidden');
    }
    expect((await api.get(`/collections/tasks/records/${r.id}`)).body.record).toEqual(r);
    expect((await api.get('/collections', 'public')).status).toBe(200);
  });

  it('a request without a key is refused by the gateway (401)', async () => {
    const res = await api.get('/collections/tasks/records').set('Authorization', '');
    expect(res.status).toBe(401);
  });
});
