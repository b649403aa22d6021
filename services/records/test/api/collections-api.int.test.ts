/** Collections through the real gateway: contract §4 (Collections) and docs/records.md. */
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { client, type Client } from './client';

let t: TestPlinth;
let api: Client;
beforeAll(async () => {
  t = await startTestPlinth();
  api = client(t);
});
afterAll(() => t.close());

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('create', () => {
  it('accepts the contract form-encoded body (fields as a JSON string) → 201 {collection}', async () => {
    const res = await api.postForm('/collections', { name: 'notes', fields: JSON.stringify({ title: { type: 'text', required: true } }) });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      collection: {
        name: 'notes',
        fields: { title: { type: 'text', required: true, unique: false, indexed: false } },
        rules: {},
        revision: 1,
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
      },
    });
  });

  it('accepts a JSON body with every field type and rules', async () => {
    const fields = {
      title: { type: 'text', indexed: true },
      price: { type: 'number' },
      count: { type: 'integer', unique: true },
      done: { type: 'boolean' },
      due: { type: 'timestamp' },
      extra: { type: 'json' },
      tags: { type: 'list' },
    };
    const res = await api.post('/collections', { name: 'all_types', fields, rules: { read: 'true' } });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body.collection.fields)).toEqual(Object.keys(fields));
    expect(res.body.collection.fields.count).toEqual({ type: 'integer', required: false, unique: true, indexed: false });
    expect(res.body.collection.rules).toEqual({ read: 'true' });
  });

  it('answers 409 for an existing name', async () => {
    await api.post('/collections', { name: 'twice', fields: {} }).expect(201);
    const res = await api.post('/collections', { name: 'twice', fields: {} });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('conflict');
  });

  it('needs the secret key (public → 403)', async () => {
    const res = await api.post('/collections', { name: 'nope', fields: {} }, 'public');
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('forbidden');
  });

  const BAD: Array<[string, object, { [k: string]: unknown }]> = [
    ['name missing', { fields: {} }, { field: 'name' }],
    ['name with upper case', { name: 'Notes', fields: {} }, { field: 'name' }],
    ['name too long', { name: `a${'b'.repeat(63)}`, fields: {} }, { field: 'name' }],
    ['fields missing', { name: 'x1' }, { field: 'fields' }],
    ['fields not JSON', { name: 'x1', fields: '{nope' }, { field: 'fields' }],
    ['reserved field name', { name: 'x1', fields: { created_at: { type: 'text' } } }, { field: 'created_at' }],
    ['field name starting with $', { name: 'x1', fields: { $where: { type: 'text' } } }, { field: '$where' }],
    ['field name with a dot', { name: 'x1', fields: { 'a.b': { type: 'text' } } }, { field: 'a.b' }],
    ['unknown type', { name: 'x1', fields: { a: { type: 'string' } } }, { field: 'a', key: 'type' }],
    ['option not boolean', { name: 'x1', fields: { a: { type: 'text', required: 'yes' } } }, { field: 'a', key: 'required' }],
    ['unknown option', { name: 'x1', fields: { a: { type: 'text', primary: true } } }, { field: 'a', key: 'primary' }],
    ['json field indexed', { name: 'x1', fields: { a: { type: 'json', indexed: true } } }, { field: 'a', key: 'indexed' }],
    ['unknown rule', { name: 'x1', fields: {}, rules: { write: 'true' } }, { field: 'write' }],
    ['rule not a string', { name: 'x1', fields: {}, rules: { read: true } }, { field: 'rules', rule: 'read' }],
    ['unknown parameter', { name: 'x1', fields: {}, color: 'red' }, { field: 'color' }],
  ];
  it.each(BAD)('refuses %s with 400 naming the field', async (_label, body, details) => {
    const res = await api.post('/collections', body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_request', details });
    expect((await api.get('/collections/x1')).status).toBe(404);
  });
});

describe('list, get, change, delete', () => {
  it('lists with the public key: name, fields, rules, revision, timestamps', async () => {
    const other = await t.createProject();
    const res = await client({ ...t, project: other }).get('/collections', 'public');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ collections: [] });
    await api.post('/collections', { name: 'listed', fields: { a: { type: 'text' } } }).expect(201);
    const mine = await api.get('/collections', 'public');
    expect(mine.status).toBe(200);
    const listed = mine.body.collections.find((c: { name: string }) => c.name === 'listed');
    expect(listed).toEqual({
      name: 'listed',
      fields: { a: { type: 'text', required: false, unique: false, indexed: false } },
      rules: {},
      revision: 1,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
  });

  it('PATCH adds, changes and removes fields and rules; every change increments revision', async () => {
    await api.post('/collections', { name: 'evolving', fields: { a: { type: 'text' }, b: { type: 'integer' } } }).expect(201);
    const rec = await api.post('/collections/evolving/records', { data: { a: 'x', b: 1 } }).expect(201);

    const added = await api.patch('/collections/evolving', { fields: { c: { type: 'boolean', indexed: true } } });
    expect(added.status).toBe(200);
    expect(added.body.collection.revision).toBe(2);
    expect(Object.keys(added.body.collection.fields)).toEqual(['a', 'b', 'c']);

    const rules = await api.patch('/collections/evolving', { rules: { read: 'true' } });
    expect(rules.body.collection).toMatchObject({ revision: 3, rules: { read: 'true' } });

    const same = await api.patch('/collections/evolving', { rules: { read: 'true' } });
    expect(same.body.collection.revision).toBe(3);

    const removed = await api.patch('/collections/evolving', { fields: { b: null } });
    expect(removed.body.collection.revision).toBe(4);
    expect(Object.keys(removed.body.collection.fields)).toEqual(['a', 'c']);
    const after = await api.get(`/collections/evolving/records/${rec.body.record.id}`);
    expect(after.body.record).not.toHaveProperty('b');
    expect(after.body.record.a).toBe('x');
  });

  it('PATCH refuses a type change (400), a public key (403), an unknown collection (404)', async () => {
    await api.post('/collections', { name: 'fixed', fields: { a: { type: 'text' } } }).expect(201);
    const typed = await api.patch('/collections/fixed', { fields: { a: { type: 'number' } } });
    expect(typed.status).toBe(400);
    expect(typed.body.details).toMatchObject({ field: 'a', key: 'type' });
    expect((await api.patch('/collections/fixed', { rules: { read: 'true' } }, 'public')).status).toBe(403);
    expect((await api.patch('/collections/ghost', { rules: {} })).status).toBe(404);
    expect((await api.get('/collections/fixed')).body.collection.revision).toBe(1);
  });

  it('PATCH making a field unique over duplicate values → 409, nothing changed', async () => {
    await api.post('/collections', { name: 'dupes', fields: { a: { type: 'text' } } }).expect(201);
    await api.post('/collections/dupes/records', { data: { a: 'same' } }).expect(201);
    await api.post('/collections/dupes/records', { data: { a: 'same' } }).expect(201);
    const res = await api.patch('/collections/dupes', { fields: { a: { type: 'text', unique: true } } });
    expect(res.status).toBe(409);
    expect((await api.get('/collections/dupes')).body.collection.revision).toBe(1);
  });

  it('DELETE removes the collection and its records (secret key only)', async () => {
    await api.post('/collections', { name: 'doomed', fields: { a: { type: 'text' } } }).expect(201);
    await api.post('/collections/doomed/records', { data: { a: 'x' } }).expect(201);
    expect((await api.delete('/collections/doomed', 'public')).status).toBe(403);
    const res = await api.delete('/collections/doomed');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ deleted: true, name: 'doomed' });
    expect((await api.get('/collections/doomed/records')).status).toBe(404);
    expect((await api.delete('/collections/doomed')).status).toBe(404);
    await api.post('/collections', { name: 'doomed', fields: { a: { type: 'text' } } }).expect(201);
    expect((await api.get('/collections/doomed/records')).body.records).toEqual([]);
  });
});

describe('index limit: at most 20 indexed or unique fields (MongoDB holds 64 indexes per collection), on every store', () => {
  const indexed = (n: number, prefix = 'f') =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i + 1}`, { type: 'text', [i % 2 ? 'unique' : 'indexed']: true }]));

  it('a definition with 21 → 400 naming the limit; 20 are accepted; a PATCH adding a 21st → 400, one swapping them → 200', async () => {
    const over = await api.post('/collections', { name: 'too_wide', fields: { ...indexed(21), plain: { type: 'text' } } });
    expect(over.status).toBe(400);
    expect(over.body).toMatchObject({ error: 'invalid_request', details: { field: 'fields', limit: 20, indexed_fields: 21 } });
    expect(over.body.message).toContain('at most 20');
    expect((await api.get('/collections/too_wide')).status).toBe(404);
    await api.post('/collections', { name: 'wide', fields: indexed(20) }).expect(201);
    const more = await api.patch('/collections/wide', { fields: { extra: { type: 'integer', indexed: true } } });
    expect(more.status).toBe(400);
    expect(more.body.details).toMatchObject({ limit: 20, indexed_fields: 21 });
    const swap = await api.patch('/collections/wide', { fields: { ...Object.fromEntries(Object.keys(indexed(20)).map((f) => [f, null])), ...indexed(20, 'g') } });
    expect(swap.status).toBe(200);
    expect(Object.keys(swap.body.collection.fields)).toEqual(Object.keys(indexed(20, 'g')));
  });
});

