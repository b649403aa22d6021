/**
 * Field options on record writes (docs/records.md, "Field options"), through the real gateway in
 * both topologies: a value breaking a constraint is a 400 naming the field and the constraint on
 * create and on PATCH, nothing stored; defaults fill absent fields on create only; changing a
 * constraint rewrites no stored record; a pathological pattern is matched in linear time.
 */
import request from 'supertest';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { client, type Client } from './client';

let t: TestPlinth;
let api: Client;

const FIELDS = {
  n: { type: 'integer', min: 1, max: 10 },
  price: { type: 'number', min: 0.5 },
  due: { type: 'timestamp', min: '2026-01-01T00:00:00Z', max: '2026-12-31T23:59:59Z' },
  title: { type: 'text', min_length: 2, max_length: 5 },
  tags: { type: 'list', min_length: 1, max_length: 3 },
  slug: { type: 'text', pattern: '^[a-z]+(-[a-z]+)*$' },
  status: { type: 'text', enum: ['open', 'closed'], default: 'open' },
  level: { type: 'integer', enum: [1, 2, 3] },
  meta: { type: 'json', default: { k: [1] } },
};

beforeAll(async () => {
  t = await startTestPlinth();
  api = client(t);
  await api.post('/collections', { name: 'items', fields: FIELDS }).expect(201);
});
afterAll(() => t.close());

async function count(): Promise<number> {
  return (await api.get('/collections/items/records?limit=1000').expect(200)).body.records.length;
}

const BROKEN: Array<[string, object, string, object]> = [
  ['integer below min', { n: 0 }, 'min', { limit: 1 }],
  ['integer above max', { n: 11 }, 'max', { limit: 10 }],
  ['number below min', { price: 0.49 }, 'min', { limit: 0.5 }],
  ['timestamp before min', { due: '2026-01-01T01:59:59+02:00' }, 'min', { limit: '2026-01-01T00:00:00.000Z' }],
  ['timestamp after max', { due: '2027-01-01T00:00:00Z' }, 'max', { limit: '2026-12-31T23:59:59.000Z' }],
  ['text shorter than min_length', { title: 'a' }, 'min_length', { limit: 2 }],
  ['text longer than max_length (characters, not UTF-16 units)', { title: '😀😀😀😀😀😀' }, 'max_length', { limit: 5 }],
  ['list with fewer items than min_length', { tags: [] }, 'min_length', { limit: 1 }],
  ['list with more items than max_length', { tags: [1, 2, 3, 4] }, 'max_length', { limit: 3 }],
  ['text not matching pattern', { slug: 'Not-a-slug' }, 'pattern', { pattern: '^[a-z]+(-[a-z]+)*$' }],
  ['text not in enum', { status: 'draft' }, 'enum', { allowed: ['open', 'closed'] }],
  ['integer not in enum', { level: 4 }, 'enum', { allowed: [1, 2, 3] }],
];

describe('a value breaking a constraint → 400 naming the field and the constraint', () => {
  let valid: { id: string; version: number };
  beforeAll(async () => {
    valid = (await api.post('/collections/items/records', { data: { n: 5, title: 'ok' } }).expect(201)).body.record;
  });

  it.each(BROKEN)('%s: on create, nothing stored', async (_name, data, constraint, extra) => {
    const field = Object.keys(data)[0]!;
    const before = await count();
    const res = await api.post('/collections/items/records', { data });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_request', message: expect.stringContaining(`"${field}"`), details: { field, constraint, ...extra } });
    expect(await count()).toBe(before);
  });

  it.each(BROKEN)('%s: on PATCH, the record unchanged', async (_name, data, constraint, extra) => {
    const field = Object.keys(data)[0]!;
    const res = await api.patch(`/collections/items/records/${valid.id}`, { data });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual({ field, constraint, ...extra });
    const now = (await api.get(`/collections/items/records/${valid.id}`).expect(200)).body.record;
    expect(now).toEqual(expect.objectContaining({ version: valid.version, n: 5, title: 'ok' }));
  });
});

describe('values within the constraints', () => {
  it.each([
    ['integer at min and max', { n: 1 }, { n: 10 }],
    ['timestamp at min, given in another zone', { due: '2026-01-01T02:00:00+02:00' }, { due: '2026-12-31T23:59:59.000Z' }],
    ['text at min_length and max_length, emoji counted as one character', { title: '😀😀' }, { title: '😀😀😀😀😀' }],
    ['list at min_length and max_length', { tags: ['a'] }, { tags: ['a', 2, true] }],
    ['pattern matched', { slug: 'a' }, { slug: 'two-words' }],
    ['enum values', { status: 'closed', level: 1 }, { level: 3 }],
  ])('%s → 201 on create and 200 on PATCH', async (_name, created, patched) => {
    const rec = (await api.post('/collections/items/records', { data: created }).expect(201)).body.record;
    const res = await api.patch(`/collections/items/records/${rec.id}`, { data: patched }).expect(200);
    expect(res.body.record).toEqual(expect.objectContaining({ ...created, ...patched }));
  });
});

describe('defaults', () => {
  it('fill absent and null fields on create; a value given is kept', async () => {
    const absent = (await api.post('/collections/items/records', { data: {} }).expect(201)).body.record;
    expect(absent).toEqual(expect.objectContaining({ status: 'open', meta: { k: [1] } }));
    const nulls = (await api.post('/collections/items/records', { data: { status: null, meta: null } }).expect(201)).body.record;
    expect(nulls).toEqual(expect.objectContaining({ status: 'open', meta: { k: [1] } }));
    const given = (await api.post('/collections/items/records', { data: { status: 'closed', meta: 7 } }).expect(201)).body.record;
    expect(given).toEqual(expect.objectContaining({ status: 'closed', meta: 7 }));
  });

  it('are not applied by PATCH: removing a field with a default leaves it absent', async () => {
    const rec = (await api.post('/collections/items/records', { data: {} }).expect(201)).body.record;
    const res = await api.patch(`/collections/items/records/${rec.id}`, { data: { status: null } }).expect(200);
    expect(res.body.record).not.toHaveProperty('status');
  });
});

describe('changing a constraint rewrites no stored record', () => {
  it('a record breaking a tightened constraint reads as stored; only a write of that field is checked', async () => {
    await api.post('/collections', { name: 'loose', fields: { n: { type: 'integer' }, note: { type: 'text' } } }).expect(201);
    const rec = (await api.post('/collections/loose/records', { data: { n: 8, note: 'a' } }).expect(201)).body.record;
    await api.patch('/collections/loose', { fields: { n: { type: 'integer', max: 5 }, label: { type: 'text', default: 'new' } } }).expect(200);
    expect((await api.get(`/collections/loose/records/${rec.id}`).expect(200)).body.record).toEqual(rec);
    // A PATCH of another field succeeds and keeps n; the new field's default is not added.
    const patched = (await api.patch(`/collections/loose/records/${rec.id}`, { data: { note: 'b' } }).expect(200)).body.record;
    expect(patched).toEqual({ ...rec, note: 'b', version: 2, updated_at: patched.updated_at });
    // Writing n itself is checked against the new constraint.
    const res = await api.patch(`/collections/loose/records/${rec.id}`, { data: { n: 8 } });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual({ field: 'n', constraint: 'max', limit: 5 });
  });
});

describe('a pathological pattern', () => {
  beforeAll(async () => {
    await api.post('/collections', { name: 'redos', fields: { s: { type: 'text', pattern: '(a+)+$' } } }).expect(201);
  });

  it('(a+)+$ against 50 kB is answered (400 or 201) while /healthz answers meanwhile', async () => {
    // A backtracking engine takes 2^50000 steps on the first value: the bound only catches a hang.
    const writes = [
      api.post('/collections/redos/records', { data: { s: `${'a'.repeat(50_000)}!` } }).timeout(10_000),
      api.post('/collections/redos/records', { data: { s: 'a'.repeat(50_000) } }).timeout(10_000),
    ];
    const health = request(t.app).get('/healthz').timeout(10_000);
    const [refused, stored, healthz] = await Promise.all([...writes, health]);
    expect(healthz.status).toBe(200);
    expect(refused.status).toBe(400);
    expect(refused.body.details).toEqual({ field: 's', constraint: 'pattern', pattern: '(a+)+$' });
    expect(stored.status).toBe(201);
  });
});
