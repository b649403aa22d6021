/**
 * The AccessPolicy seam (docs/rules.md) with an owner-only test policy: reads AND the residual
 * with the client's where, a `false` residual is 403, a record outside the residual is 404 on
 * get, writes ask canCreate / canUpdate / canDelete, and the secret key bypasses the policy.
 */
import request from 'supertest';
import type { Request } from 'express';
import { createLogger, InvalidRequestError, internalHeaders, type KeyKind } from '@plinth/shared';
import { createRecordsApp } from '../src/app';
import type { AccessPolicy, AuthInfo } from '../src/domain/access-policy';
import { SqliteRecordStore } from '../src/store/sqlite/sqlite-record-store';

const SECRET = 'x'.repeat(40);
const PROJECT = 'seam-test';
const BASE = `/v1/projects/${PROJECT}/collections`;

const ownerPolicy: AccessPolicy = {
  validateRules: (c) => {
    if (c.rules.read === 'bad') throw new InvalidRequestError('Rule "read" does not compile.', { rule: 'read', position: 0 });
  },
  readFilter: (ctx) => (ctx.auth ? ['owner', '==', ctx.auth.uid] : false),
  canCreate: (ctx, _c, data) => ctx.auth !== null && data.owner === ctx.auth.uid,
  canUpdate: (ctx, _c, before, after) => ctx.auth !== null && before.owner === ctx.auth.uid && after.owner === ctx.auth.uid,
  canDelete: (ctx, _c, record) => ctx.auth !== null && record.owner === ctx.auth.uid,
};

/** Test stand-in for the JWT verifier: the uid is the X-Db-User-Token itself. */
async function authenticateUser(req: Request): Promise<AuthInfo | null> {
  const token = req.get('x-db-user-token');
  return token ? { uid: token, email: null, email_verified: false, claims: {}, exp: 2_000_000_000 } : null;
}

let store: SqliteRecordStore;
let app: ReturnType<typeof createRecordsApp>;
let n = 0;

function as(keyKind: KeyKind, user?: string) {
  const headers = (method: string, path: string, body?: object): { [k: string]: string } => {
    const requestId = `req-${++n}`;
    const op = { method, path: `${BASE}${path}` };
    const h = internalHeaders(SECRET, { project: PROJECT, keyKind, requestId }, op, body === undefined ? undefined : JSON.stringify(body));
    if (user) h['x-db-user-token'] = user;
    return h;
  };
  return {
    get: (path: string) => request(app).get(`${BASE}${path}`).set(headers('GET', path)),
    post: (path: string, body: object) => request(app).post(`${BASE}${path}`).set(headers('POST', path, body)).send(body),
    patch: (path: string, body: object) => request(app).patch(`${BASE}${path}`).set(headers('PATCH', path, body)).send(body),
    delete: (path: string) => request(app).delete(`${BASE}${path}`).set(headers('DELETE', path)),
  };
}

const admin = as('secret');
const u1 = as('public', 'u1');
const u2 = as('public', 'u2');
const anonymous = as('public');
let mine: string;
let theirs: string;

beforeAll(async () => {
  store = SqliteRecordStore.open(':memory:');
  app = createRecordsApp({ logger: createLogger('test', 'silent'), internalSecret: SECRET, store, policy: ownerPolicy, authenticateUser });
  await admin.post('', { name: 'notes', fields: { owner: { type: 'text', indexed: true }, body: { type: 'text' }, n: { type: 'integer' } } }).expect(201);
  mine = (await admin.post('/notes/records', { data: { owner: 'u1', body: 'a', n: 1 } }).expect(201)).body.record.id;
  await admin.post('/notes/records', { data: { owner: 'u1', body: 'b', n: 2 } }).expect(201);
  theirs = (await admin.post('/notes/records', { data: { owner: 'u2', body: 'c', n: 3 } }).expect(201)).body.record.id;
});
afterAll(() => store.close());

it('a query returns only records inside the residual, ANDed with the where', async () => {
  const all = await u1.get('/notes/records');
  expect(all.status).toBe(200);
  expect(all.body.records.map((r: { body: string }) => r.body)).toEqual(['a', 'b']);
  const filtered = await u1.get(`/notes/records?where=${encodeURIComponent(JSON.stringify([['n', '>', 1]]))}`);
  expect(filtered.body.records.map((r: { body: string }) => r.body)).toEqual(['b']);
  const widened = await u1.get(`/notes/records?where=${encodeURIComponent(JSON.stringify([['owner', '==', 'u2']]))}`);
  expect(widened.body.records).toEqual([]);
});

it('a residual of false (no user) → 403 on query and get', async () => {
  expect((await anonymous.get('/notes/records')).status).toBe(403);
  expect((await anonymous.get(`/notes/records/${mine}`)).status).toBe(403);
});

it('get of a record outside the residual → 404, inside → 200', async () => {
  expect((await u1.get(`/notes/records/${theirs}`)).status).toBe(404);
  expect((await u1.get(`/notes/records/${mine}`)).body.record.body).toBe('a');
});

it('create asks canCreate', async () => {
  expect((await u1.post('/notes/records', { data: { owner: 'u2', body: 'forged' } })).status).toBe(403);
  expect((await u1.post('/notes/records', { data: { owner: 'u1', body: 'own' } })).status).toBe(201);
  const forged = await admin.get(`/notes/records?where=${encodeURIComponent(JSON.stringify([['body', '==', 'forged']]))}`);
  expect(forged.body.records).toEqual([]);
});

it('update asks canUpdate with the record before and after; a refused record the caller cannot read is 404, as on get', async () => {
  expect((await u1.patch(`/notes/records/${theirs}`, { data: { body: 'x' } })).status).toBe(404);
  expect((await u1.patch(`/notes/records/${mine}`, { data: { owner: 'u2' } })).status).toBe(403);
  const ok = await u1.patch(`/notes/records/${mine}`, { data: { body: 'a2' } });
  expect(ok.status).toBe(200);
  expect(ok.body.record).toMatchObject({ body: 'a2', version: 2 });
  expect((await admin.get(`/notes/records/${theirs}`)).body.record.body).toBe('c');
});

it('delete asks canDelete; a refused record the caller cannot read is 404, as on get', async () => {
  const doomed = (await u2.post('/notes/records', { data: { owner: 'u2', body: 'temp' } }).expect(201)).body.record.id;
  expect((await u1.delete(`/notes/records/${doomed}`)).status).toBe(404);
  expect((await anonymous.delete(`/notes/records/${doomed}`)).status).toBe(403);
  expect((await u2.delete(`/notes/records/${doomed}`)).status).toBe(200);
});

it('the secret key bypasses the policy', async () => {
  const res = await admin.get('/notes/records?limit=100');
  expect(res.body.records.map((r: { owner: string }) => r.owner)).toEqual(expect.arrayContaining(['u1', 'u2']));
  expect((await admin.get(`/notes/records/${theirs}`)).status).toBe(200);
});

it('rules are validated by the policy when a collection is created or changed', async () => {
  const created = await admin.post('', { name: 'badrules', fields: {}, rules: { read: 'bad' } });
  expect(created.status).toBe(400);
  expect(created.body.details).toEqual({ rule: 'read', position: 0 });
  const patched = await admin.patch('/notes', { rules: { read: 'bad' } });
  expect(patched.status).toBe(400);
  expect((await admin.get('/notes')).body.collection.rules).toEqual({});
});

it('a public key lists collections but cannot create them', async () => {
  expect((await anonymous.get('')).body.collections.map((c: { name: string }) => c.name)).toEqual(['notes']);
  expect((await u1.post('', { name: 'mine', fields: {} })).status).toBe(403);
});

it('an Idempotency-Key replays only for the same caller', async () => {
  const body = { data: { owner: 'u1', body: 'idem' } };
  const first = await u1.post('/notes/records', body).set('Idempotency-Key', 'shared-key');
  expect(first.status).toBe(201);
  const again = await u1.post('/notes/records', body).set('Idempotency-Key', 'shared-key');
  expect(again.body).toEqual(first.body);
  const otherCaller = await admin.post('/notes/records', body).set('Idempotency-Key', 'shared-key');
  expect(otherCaller.status).toBe(409);
});

describe('POST …/subscribe', () => {
  const subscribe = (who: ReturnType<typeof as>, body: object) => who.post('/notes/subscribe', body);

  it("answers the client's where AND the residual, with the token's expiry and the collection's revision", async () => {
    const res = await subscribe(u1, { where: [['n', '>', 1]] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      subscription: {
        collection: 'notes',
        revision: 1,
        predicate: { and: [['n', '>', 1], ['owner', '==', 'u1']] },
        order: { orderBy: 'created_at', direction: 'asc' },
        limit: 50,
        expires_at: new Date(2_000_000_000 * 1000).toISOString(),
      },
    });
  });

  it('with snapshot: true, returns the first page of that query; GET …/records continues it with the cursor', async () => {
    const res = await subscribe(u1, { snapshot: true, limit: 1, orderBy: 'n', direction: 'desc' });
    expect(res.status).toBe(200);
    const { snapshot, order } = res.body.subscription;
    expect(order).toEqual({ orderBy: 'n', direction: 'desc' });
    expect(snapshot.records).toHaveLength(1);
    expect(snapshot.records[0]).toMatchObject({ owner: 'u1', n: 2 });
    const next = await u1.get(`/notes/records?orderBy=n&direction=desc&limit=1&cursor=${snapshot.cursor}`);
    expect(next.status).toBe(200);
    expect(next.body.records[0]).toMatchObject({ owner: 'u1', n: 1 });
  });

  it('403 when the read rule resolves to false; the secret key gets everything and no expiry', async () => {
    const denied = await subscribe(anonymous, {});
    expect(denied.status).toBe(403);
    expect(denied.body.error).toBe('forbidden');
    const secret = await subscribe(admin, { snapshot: true, limit: 1000 });
    expect(secret.body.subscription).toMatchObject({ predicate: true, expires_at: null, limit: 1000 });
    expect(secret.body.subscription.snapshot.records.map((r: { owner: string }) => r.owner)).toEqual(expect.arrayContaining(['u1', 'u2']));
    expect(secret.body.subscription.snapshot.cursor).toBeNull();
  });

  it('400 naming the field for a bad limit, snapshot, where or an unknown parameter; 404 for an unknown collection', async () => {
    const cases: Array<[object, object]> = [
      [{ limit: 0 }, { field: 'limit' }],
      [{ limit: '10' }, { field: 'limit' }],
      [{ snapshot: 'yes' }, { field: 'snapshot' }],
      [{ where: { owner: 'u2' } }, { field: 'where' }],
      [{ where: [['secret', '==', 1]] }, { parameter: 'where', field: 'secret' }],
      [{ orderBy: 'nope' }, { parameter: 'orderBy' }],
      [{ cursor: 'x' }, { field: 'cursor' }],
    ];
    for (const [body, details] of cases) {
      const res = await subscribe(u1, body);
      expect({ body, status: res.status, error: res.body.error }).toEqual({ body, status: 400, error: 'invalid_request' });
      expect(res.body.details).toMatchObject(details);
    }
    expect((await u1.post('/nothing/subscribe', {})).status).toBe(404);
  });
});
