/**
 * Aggregates through the real gateway: `GET …/aggregate?where=…&count=true&sum=…&avg=…` and
 * `GET …/records?count=true` (total beside the page), their parameter checks, and the read rule:
 * a caller's count and sums are the length and sums of exactly what that caller can list.
 */
import request from 'supertest';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { client, qs, type Client } from './client';

const PASSWORD = 'aggregates over http password';

let t: TestPlinth;
let api: Client;

const at = (path: string): string => `/v1/projects/${t.project.id}${path}`;

/** A request with the public key and, when given, a user token. */
function asUser(path: string, token?: string): request.Test {
  const r = request(t.app).get(at(path)).set('Authorization', `Bearer ${t.project.publicKey}`);
  return token === undefined ? r : r.set('X-Db-User-Token', token);
}

async function signUp(email: string): Promise<{ uid: string; token: string }> {
  const res = await request(t.app).post(at('/auth/signup')).set('Authorization', `Bearer ${t.project.publicKey}`).send({ email, password: PASSWORD });
  expect(res.status).toBe(201);
  return { uid: res.body.user.id, token: res.body.access_token };
}

beforeAll(async () => {
  t = await startTestPlinth();
  api = client(t);
  await api
    .post('/collections', {
      name: 'sales',
      fields: { region: { type: 'text', indexed: true }, units: { type: 'integer' }, price: { type: 'number' }, label: { type: 'text' }, tags: { type: 'list' } },
    })
    .expect(201);
  // units 1..8; price missing on every third; region by parity.
  for (let n = 1; n <= 8; n++) {
    const data: { [k: string]: unknown } = { region: n % 2 === 0 ? 'east' : 'west', units: n, label: `s${n}` };
    if (n % 3 !== 0) data.price = n / 2;
    await api.post('/collections/sales/records', { data }).expect(201);
  }
});
afterAll(() => t.close());

const aggregate = (params: { [k: string]: unknown }, key: 'secret' | 'public' = 'secret') => api.get(`/collections/sales/aggregate${qs(params)}`, key);

describe('GET …/aggregate', () => {
  it('answers count, sums and means at once, over the where, with only what was asked for', async () => {
    const res = await aggregate({ where: [['region', '==', 'east']], count: true, sum: 'units,price', avg: 'units' });
    expect(res.status).toBe(200);
    // east: units 2, 4, 6, 8; price 1, 2, (6 missing), 4.
    expect(res.body).toEqual({ count: 4, sum: { units: 20, price: 7 }, avg: { units: 5 } });
    expect(await aggregate({ count: true }).then((r) => r.body)).toEqual({ count: 8 });
    expect(await aggregate({ avg: 'price' }).then((r) => r.body)).toEqual({ avg: { price: (0.5 + 1 + 2 + 2.5 + 3.5 + 4) / 6 } });
  });

  it('over nothing: count 0, sum 0, avg null', async () => {
    const res = await aggregate({ where: [['region', '==', 'north']], count: true, sum: 'units', avg: 'price' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ count: 0, sum: { units: 0 }, avg: { price: null } });
  });

  it.each<[string, { [k: string]: unknown }, string, { [k: string]: unknown }]>([
    ['an unknown parameter', { count: true, wher: '[]' }, 'Unknown query parameter "wher"', { parameter: 'wher' }],
    ['sum of a text field', { sum: 'label' }, 'Cannot sum "label": a field of type text', { parameter: 'sum', field: 'label' }],
    ['avg of a list field', { avg: 'tags' }, 'Cannot avg "tags": a field of type list', { parameter: 'avg', field: 'tags' }],
    ['sum of an unknown field', { sum: 'units,weight' }, 'Cannot sum "weight": not a field of this collection', { parameter: 'sum', field: 'weight' }],
    ['nothing asked for', { where: [['units', '>', 1]] }, 'Ask for at least one of count=true', { parameter: 'count' }],
    ['count that is not true or false', { count: 'yes' }, '"count" must be true or false', { parameter: 'count' }],
    ['a where on an unknown field', { count: true, where: [['weight', '>', 1]] }, 'weight', { parameter: 'where' }],
  ])('%s is a 400 naming it', async (_label, params, message, details) => {
    const res = await aggregate(params);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
    expect(res.body.message).toContain(message);
    expect(res.body.details).toMatchObject(details);
  });

  it('a repeated sum is a 400 (fields are comma-separated)', async () => {
    const res = await api.get('/collections/sales/aggregate?sum=units&sum=price');
    expect(res.status).toBe(400);
    expect(res.body.details).toMatchObject({ parameter: 'sum' });
  });

  it('an unknown collection is a 404', async () => {
    expect((await api.get('/collections/nothing/aggregate?count=true')).status).toBe(404);
  });
});

describe('GET …/records?count=true', () => {
  it('adds total, the count of the whole query, beside every page', async () => {
    const first = await api.get(`/collections/sales/records${qs({ where: [['units', '>', 2]], limit: 4, count: true })}`);
    expect(first.status).toBe(200);
    expect(first.body.records).toHaveLength(4);
    expect(first.body.total).toBe(6);
    const next = await api.get(`/collections/sales/records${qs({ where: [['units', '>', 2]], limit: 4, count: true, cursor: first.body.cursor })}`);
    expect(next.body.records).toHaveLength(2);
    expect(next.body.total).toBe(6);
  });

  it('without count (or count=false) the answer has no total', async () => {
    expect(Object.keys((await api.get('/collections/sales/records')).body)).toEqual(['records', 'cursor']);
    expect(Object.keys((await api.get('/collections/sales/records?count=false')).body)).toEqual(['records', 'cursor']);
  });

  it('a count that is not true or false is a 400 naming it', async () => {
    const res = await api.get('/collections/sales/records?count=1');
    expect(res.status).toBe(400);
    expect(res.body.details).toMatchObject({ parameter: 'count' });
  });
});

describe('under an owner-only read rule', () => {
  let alice: { uid: string; token: string };
  let bob: { uid: string; token: string };
  beforeAll(async () => {
    await api.patch('/settings/auth', { enabled: true }).expect(200);
    await api
      .post('/collections', {
        name: 'orders',
        fields: { owner: { type: 'text', required: true, indexed: true }, amount: { type: 'number' } },
        rules: { read: 'auth != null && record.owner == auth.uid', create: 'auth != null && data.owner == auth.uid' },
      })
      .expect(201);
    alice = await signUp('alice@example.com');
    bob = await signUp('bob@example.com');
    for (const [who, amount] of [[alice, 10], [alice, 2.5], [alice, undefined], [bob, 100], [bob, 7]] as const) {
      const data = amount === undefined ? { owner: who.uid } : { owner: who.uid, amount };
      await request(t.app).post(at('/collections/orders/records')).set('Authorization', `Bearer ${t.project.publicKey}`).set('X-Db-User-Token', who.token).send({ data }).expect(201);
    }
  });

  it("count and sum equal the length and sum of what the caller can list: alice's records only", async () => {
    for (const who of [alice, bob]) {
      const listed = await asUser('/collections/orders/records?count=true', who.token);
      expect(listed.status).toBe(200);
      const records = listed.body.records as Array<{ amount?: number }>;
      const res = await asUser('/collections/orders/aggregate?count=true&sum=amount', who.token);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ count: records.length, sum: { amount: records.reduce((s, r) => s + (r.amount ?? 0), 0) } });
      expect(listed.body.total).toBe(records.length);
    }
    expect((await asUser('/collections/orders/aggregate?count=true&sum=amount', alice.token)).body).toEqual({ count: 3, sum: { amount: 12.5 } });
  });

  it("a where naming another user's records counts nothing", async () => {
    const res = await asUser(`/collections/orders/aggregate${qs({ where: [['owner', '==', bob.uid]], count: true, avg: 'amount' })}`, alice.token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ count: 0, avg: { amount: null } });
  });

  it('anonymous is refused as a list would be', async () => {
    const listed = await asUser('/collections/orders/records');
    const counted = await asUser('/collections/orders/aggregate?count=true');
    expect(listed.status).toBe(403);
    expect(counted.status).toBe(listed.status);
    expect(counted.body.error).toBe(listed.body.error);
    expect(counted.body).not.toHaveProperty('count');
  });

  it('the secret key counts every record', async () => {
    const res = await api.get('/collections/orders/aggregate?count=true&sum=amount');
    expect(res.body).toEqual({ count: 5, sum: { amount: 119.5 } });
  });
});
