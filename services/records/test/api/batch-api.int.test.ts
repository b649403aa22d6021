/**
 * `POST /v1/projects/{p}/batch` through the gateway (docs/records.md "Batch writes"): routed to
 * records, answered in order, refused whole with the failing operation's code and index, and
 * covered by one Idempotency-Key.
 */
import request from 'supertest';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { client, type Client } from './client';

let t: TestPlinth;
let api: Client;

const batch = (body: object, key: 'secret' | 'public' = 'secret', idempotencyKey?: string) => {
  const r = request(t.app).post(`${api.base}/batch`).set('Authorization', `Bearer ${key === 'secret' ? t.project.secretKey : t.project.publicKey}`);
  return (idempotencyKey ? r.set('Idempotency-Key', idempotencyKey) : r).send(body);
};

beforeAll(async () => {
  t = await startTestPlinth();
  api = client(t);
  await api.post('/collections', { name: 'batch_items', fields: { label: { type: 'text' }, n: { type: 'integer' } }, rules: { read: 'true' } }).expect(201);
}, 120_000); // the cluster topology starts several processes: slow on a busy machine
afterAll(() => t.close());

it('answers 200 {results} in order, each what its single call answers', async () => {
  const seed = (await api.post('/collections/batch_items/records', { data: { label: 'seed', n: 1 } }).expect(201)).body.record;
  const gone = (await api.post('/collections/batch_items/records', { data: { label: 'gone' } }).expect(201)).body.record;
  const res = await batch({
    operations: [
      { op: 'create', collection: 'batch_items', data: { label: 'new' } },
      { op: 'update', collection: 'batch_items', id: seed.id, data: { n: 2 }, version: 1 },
      { op: 'delete', collection: 'batch_items', id: gone.id, version: 1 },
    ],
  });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    results: [
      { record: expect.objectContaining({ id: expect.stringMatching(/^rec_/), version: 1, label: 'new' }) },
      { record: expect.objectContaining({ id: seed.id, version: 2, label: 'seed', n: 2 }) },
      { deleted: true, id: gone.id },
    ],
  });
  await api.get(`/collections/batch_items/records/${gone.id}`).expect(404);
});

it('a refused operation refuses the batch: its own code, details.index, nothing written', async () => {
  const before = (await api.get('/collections/batch_items/records?limit=100')).body.records.length;
  const res = await batch({ operations: [{ op: 'create', collection: 'batch_items', data: { label: 'x' } }, { op: 'create', collection: 'batch_items', data: { n: 'two' } }] });
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ error: 'invalid_request', details: { index: 1, field: 'n' } });
  // Without a user token the public key has no create rule: 403 at index 0.
  const denied = await batch({ operations: [{ op: 'create', collection: 'batch_items', data: {} }] }, 'public');
  expect(denied.status).toBe(403);
  expect(denied.body).toMatchObject({ error: 'forbidden', details: { index: 0 } });
  expect((await api.get('/collections/batch_items/records?limit=100')).body.records.length).toBe(before);
});

it('an Idempotency-Key covers the whole batch: the replay says so and writes nothing', async () => {
  const body = { operations: [{ op: 'create', collection: 'batch_items', data: { label: 'once' } }] };
  const first = await batch(body, 'secret', 'batch-api-1');
  const again = await batch(body, 'secret', 'batch-api-1');
  expect(again.status).toBe(200);
  expect(again.headers['idempotent-replayed']).toBe('true');
  expect(again.body).toEqual(first.body);
  const where = encodeURIComponent(JSON.stringify([['label', '==', 'once']]));
  expect((await api.get(`/collections/batch_items/records?where=${where}`)).body.records).toHaveLength(1);
});

it('only POST is routed; a malformed body is a 400', async () => {
  expect((await request(t.app).get(`${api.base}/batch`).set('Authorization', `Bearer ${t.project.secretKey}`)).status).toBe(404);
  const res = await batch({ operations: 'all of them' });
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ error: 'invalid_request', details: { field: 'operations' } });
});
