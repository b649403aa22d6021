/** Queries through the real gateway: where, orderBy, direction, limit, cursor (docs/records.md). */
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { client, qs, type Client } from './client';

let t: TestPlinth;
let api: Client;

interface Rec {
  id: string;
  n: number;
  [k: string]: unknown;
}

/** 23 items: n = 0..22; group = n % 3; prio = n % 4 (missing when n % 5 == 0); tags by parity. */
let items: Rec[] = [];

beforeAll(async () => {
  t = await startTestPlinth();
  api = client(t);
  await api
    .post('/collections', {
      name: 'items',
      fields: {
        n: { type: 'integer', required: true },
        name: { type: 'text' },
        group: { type: 'text', indexed: true },
        prio: { type: 'integer', indexed: true },
        price: { type: 'number' },
        active: { type: 'boolean' },
        at: { type: 'timestamp' },
        tags: { type: 'list' },
        meta: { type: 'json' },
      },
    })
    .expect(201);
  for (let n = 0; n < 23; n++) {
    const data: { [k: string]: unknown } = {
      n,
      name: `item-${String(n).padStart(2, '0')}`,
      group: `g${n % 3}`,
      price: n / 2,
      active: n % 2 === 0,
      at: new Date(Date.UTC(2026, 0, 1 + n)).toISOString(),
      tags: n % 2 === 0 ? ['even', `t${n % 4}`] : ['odd'],
    };
    if (n % 5 !== 0) data.prio = n % 4;
    const res = await api.post('/collections/items/records', { data }).expect(201);
    items.push(res.body.record);
  }
});
afterAll(() => t.close());

async function list(params: { [k: string]: unknown }): Promise<{ status: number; body: { records: Rec[]; cursor: string | null; [k: string]: unknown } }> {
  const res = await api.get(`/collections/items/records${qs(params)}`);
  return { status: res.status, body: res.body };
}

const ns = (records: Rec[]): number[] => records.map((r) => r.n);
const byN = (pred: (r: Rec) => boolean): number[] => items.filter(pred).map((r) => r.n);

/** Every page of a query, following `cursor` until it is null. */
async function walk(params: { [k: string]: unknown }): Promise<{ pages: number[][]; all: number[] }> {
  const pages: number[][] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 30; i++) {
    const res = await list({ ...params, cursor });
    expect(res.status).toBe(200);
    pages.push(ns(res.body.records));
    if (res.body.cursor === null) break;
    cursor = res.body.cursor;
  }
  return { pages, all: pages.flat() };
}

describe('response and order', () => {
  it('returns {records, cursor} with user fields at the top level; default order created_at asc', async () => {
    const res = await list({});
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['records', 'cursor']);
    expect(res.body.cursor).toBeNull();
    expect(res.body.records).toEqual(items);
  });

  it('direction=desc reverses the default order', async () => {
    expect(ns((await list({ direction: 'desc' })).body.records)).toEqual(ns(items).reverse());
  });

  it('orders by a user field, tie-broken by id, missing values first ascending', async () => {
    const asc = (await list({ orderBy: 'prio' })).body.records;
    const key = (r: Rec): string => `${r.prio === undefined ? '-' : String(r.prio)}|${r.id}`;
    expect(asc.map(key)).toEqual([...items].map(key).sort());
    const desc = (await list({ orderBy: 'prio', direction: 'desc' })).body.records;
    expect(desc.map(key)).toEqual([...items].map(key).sort().reverse());
  });

  it('orders by text, number, boolean, timestamp, id and version', async () => {
    expect(ns((await list({ orderBy: 'name', direction: 'desc' })).body.records)).toEqual(ns(items).reverse());
    expect(ns((await list({ orderBy: 'price' })).body.records)).toEqual(ns(items));
    expect(ns((await list({ orderBy: 'at', direction: 'desc' })).body.records)).toEqual(ns(items).reverse());
    const active = ns((await list({ orderBy: 'active' })).body.records);
    expect(active.slice(0, 11).every((n) => n % 2 === 1)).toBe(true);
    expect(ns((await list({ orderBy: 'id' })).body.records)).toEqual([...items].sort((a, b) => (a.id < b.id ? -1 : 1)).map((r) => r.n));
    expect((await list({ orderBy: 'version' })).status).toBe(200);
  });
});

describe('pagination with cursor', () => {
  it.each(['asc', 'desc'])('23 records with limit 5 walk all pages (%s) with no duplicates or gaps', async (direction) => {
    const { pages, all } = await walk({ limit: 5, direction });
    expect(pages.map((p) => p.length)).toEqual([5, 5, 5, 5, 3]);
    expect(all).toEqual(direction === 'asc' ? ns(items) : ns(items).reverse());
  });

  it.each(['asc', 'desc'])('walks an orderBy on a field with ties and missing values (%s)', async (direction) => {
    const full = ns((await list({ orderBy: 'prio', direction })).body.records);
    const { all } = await walk({ orderBy: 'prio', direction, limit: 5 });
    expect(all).toEqual(full);
    expect(new Set(all).size).toBe(23);
  });

  it('walks a filtered query', async () => {
    const where = [['group', '==', 'g1']];
    const { pages, all } = await walk({ where, limit: 3, orderBy: 'n', direction: 'desc' });
    expect(all).toEqual(byN((r) => r.n % 3 === 1).reverse());
    expect(pages.map((p) => p.length)).toEqual([3, 3, 2]);
  });

  it('the cursor is null on the last page, also when the last page is full', async () => {
    const res = await list({ limit: 23 });
    expect(res.body.records).toHaveLength(23);
    expect(res.body.cursor).toBeNull();
    const { pages } = await walk({ where: [['group', '==', 'g0']], limit: 4 });
    expect(pages.map((p) => p.length)).toEqual([4, 4]);
  });

  it('the limit may change between pages', async () => {
    const first = await list({ limit: 5 });
    const next = await list({ limit: 10, cursor: first.body.cursor });
    expect(ns(next.body.records)).toEqual(ns(items).slice(5, 15));
  });

  it('a cursor reused with another query → 400', async () => {
    const first = await list({ limit: 5, where: [['group', '==', 'g0']] });
    const cursor = first.body.cursor;
    for (const other of [
      { where: [['group', '==', 'g1']] },
      { where: [['group', '==', 'g0']], direction: 'desc' },
      { where: [['group', '==', 'g0']], orderBy: 'n' },
      {},
    ]) {
      const res = await list({ ...other, limit: 5, cursor });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: 'invalid_request', details: { parameter: 'cursor' } });
    }
  });

  it('a made-up cursor → 400', async () => {
    for (const cursor of ['nonsense', Buffer.from('{"q":"x","v":1,"id":"rec_1"}').toString('base64url')]) {
      const res = await list({ cursor });
      expect(res.status).toBe(400);
      expect(res.body.details).toEqual({ parameter: 'cursor' });
    }
  });
});

describe('limit', () => {
  it('defaults to 50 and accepts up to 1000; above 1000, 0 or not a number → 400', async () => {
    await api.post('/collections', { name: 'many', fields: { i: { type: 'integer' } } }).expect(201);
    for (let i = 0; i < 51; i++) await api.post('/collections/many/records', { data: { i } }).expect(201);
    const dflt = await api.get('/collections/many/records');
    expect(dflt.body.records).toHaveLength(50);
    expect(typeof dflt.body.cursor).toBe('string');
    expect((await api.get('/collections/many/records?limit=1000')).body.records).toHaveLength(51);
    for (const bad of ['1001', '0', '-1', 'ten', '2.5']) {
      const res = await api.get(`/collections/many/records?limit=${bad}`);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: 'invalid_request', details: { parameter: 'limit' } });
    }
  });
});

describe('where', () => {
  const OPS: Array<[string, unknown[], (r: Rec) => boolean]> = [
    ['==', ['group', '==', 'g1'], (r) => r.n % 3 === 1],
    ['== null (missing)', ['prio', '==', null], (r) => r.n % 5 === 0],
    ['!=', ['group', '!=', 'g1'], (r) => r.n % 3 !== 1],
    ['!= matches missing', ['prio', '!=', 1], (r) => r.n % 5 === 0 || r.n % 4 !== 1],
    ['<', ['n', '<', 3], (r) => r.n < 3],
    ['<=', ['price', '<=', 1.5], (r) => r.n <= 3],
    ['>', ['at', '>', '2026-01-20T00:00:00Z'], (r) => r.n > 19],
    ['>= on text', ['name', '>=', 'item-20'], (r) => r.n >= 20],
    ['== timestamp written in another zone', ['at', '==', '2026-01-05T02:00:00+02:00'], (r) => r.n === 4],
    ['in', ['n', 'in', [1, 5, 22, 99]], (r) => [1, 5, 22].includes(r.n)],
    ['not-in', ['group', 'not-in', ['g0', 'g1']], (r) => r.n % 3 === 2],
    ['== boolean', ['active', '==', true], (r) => r.n % 2 === 0],
    ['array-contains', ['tags', 'array-contains', 't2'], (r) => r.n % 4 === 2],
    ['array-contains-any', ['tags', 'array-contains-any', ['odd', 't0']], (r) => r.n % 2 === 1 || r.n % 4 === 0],
    ['version', ['version', '==', 1], () => true],
    ['id', ['id', '==', 'placeholder'], () => false],
  ];
  it.each(OPS)('%s', async (_label, condition, expected) => {
    const res = await list({ where: [condition] });
    expect(res.status).toBe(200);
    expect(ns(res.body.records)).toEqual(byN(expected));
  });

  it('ANDs conditions', async () => {
    const res = await list({ where: [['group', '==', 'g0'], ['n', '>=', 10], ['active', '==', false]] });
    expect(ns(res.body.records)).toEqual([15, 21]);
  });

  it('filters on id and created_at', async () => {
    const target = items[7] as Rec;
    expect(ns((await list({ where: [['id', '==', target.id]] })).body.records)).toEqual([7]);
    const after = (await list({ where: [['created_at', '>=', target.created_at]] })).body.records;
    expect(after.every((r) => (r.created_at as string) >= (target.created_at as string))).toBe(true);
    expect(ns(after)).toContain(22);
  });

  const BAD: Array<[string, string, { [k: string]: unknown }]> = [
    ['not JSON', '[["n","==",1]', {}],
    ['not an array', JSON.stringify({ n: 1 }), {}],
    ['a mongo-style object', JSON.stringify({ name: { $ne: null } }), {}],
    ['a condition that is not a triple', JSON.stringify([['n', '==']]), { index: 0 }],
    ['an unknown field', JSON.stringify([['colour', '==', 'red']]), { field: 'colour' }],
    ['a $-prefixed field', JSON.stringify([['$where', '==', '1']]), { field: '$where' }],
    ['a dotted field', JSON.stringify([['meta.x', '==', 1]]), { field: 'meta.x' }],
    ['an unknown operator', JSON.stringify([['n', 'like', 1]]), { op: 'like' }],
    ['a mongo operator', JSON.stringify([['n', '$gt', 1]]), { op: '$gt' }],
    ['a wrong value type', JSON.stringify([['n', '==', 'one']]), { field: 'n', expected: 'integer' }],
    ['a boolean for a text field', JSON.stringify([['name', '==', true]]), { field: 'name' }],
    ['a bad timestamp', JSON.stringify([['at', '>', 'yesterday']]), { field: 'at' }],
    ['a {"$ne": null} value', JSON.stringify([['name', '==', { $ne: null }]]), { field: 'name' }],
    ['a {"$gt": ""} value on !=', JSON.stringify([['name', '!=', { $gt: '' }]]), { field: 'name' }],
    ['an operator object inside in', JSON.stringify([['name', 'in', [{ $ne: null }]]]), { field: 'name' }],
    ['in without a list', JSON.stringify([['n', 'in', 1]]), { op: 'in' }],
    ['in with an empty list', JSON.stringify([['n', 'in', []]]), { op: 'in' }],
    ['a range on null', JSON.stringify([['n', '>', null]]), { field: 'n' }],
    ['a range on a boolean field', JSON.stringify([['active', '>', false]]), { field: 'active', op: '>' }],
    ['array-contains on a text field', JSON.stringify([['name', 'array-contains', 'a']]), { field: 'name' }],
    ['== on a list field', JSON.stringify([['tags', '==', ['odd']]]), { field: 'tags' }],
    ['array-contains with an object', JSON.stringify([['tags', 'array-contains', { $ne: null }]]), { field: 'tags' }],
    ['a json field', JSON.stringify([['meta', '==', 1]]), { field: 'meta' }],
  ];
  it.each(BAD)('refuses %s → 400 invalid_request', async (_label, where, details) => {
    const res = await api.get(`/collections/items/records?where=${encodeURIComponent(where)}`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_request', details: { parameter: 'where', ...details } });
  });

  it('refuses where given twice, an unknown or $ orderBy, a bad direction', async () => {
    expect((await api.get('/collections/items/records?where=[]&where=[]')).status).toBe(400);
    for (const [params, details] of [
      [{ orderBy: '$natural' }, { parameter: 'orderBy' }],
      [{ orderBy: 'meta' }, { parameter: 'orderBy' }],
      [{ orderBy: 'tags' }, { parameter: 'orderBy' }],
      [{ direction: 'down' }, { parameter: 'direction' }],
    ] as const) {
      const res = await list(params);
      expect(res.status).toBe(400);
      expect(res.body.details).toMatchObject(details);
    }
  });

  it('refuses a parameter it does not know, naming it, instead of ignoring it (`?wher=` returned everything)', async () => {
    for (const name of ['wher', 'order_by', 'sort', 'count']) {
      const res = await list({ [name]: name === 'wher' ? JSON.stringify([['group', '==', 'g1']]) : 'x' });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: 'invalid_request', details: { parameter: name } });
      expect(res.body.message).toContain(`"${name}"`);
    }
    const long = await list({ ['p'.repeat(5000)]: '1' });
    expect(long.status).toBe(400);
    expect(String(long.body.message).length).toBeLessThan(300);
  });

  it('no crafted value or field widens a query beyond its matches', async () => {
    // The only way to get every record is to ask for it; each of these is refused or exact.
    const attempts = [
      [['name', '==', { $ne: null }]],
      [['name', '!=', { $exists: false }]],
      [['$or', '==', [{}]]],
      [['n', '>', { $type: 'number' }]],
      [['name', 'in', { $ne: 1 }]],
    ];
    for (const where of attempts) {
      const res = await list({ where });
      expect(res.status).toBe(400);
      expect(res.body.records).toBeUndefined();
    }
    expect(ns((await list({ where: [['name', '==', 'item-03']] })).body.records)).toEqual([3]);
  });
});
