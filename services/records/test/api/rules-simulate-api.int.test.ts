/**
 * The rule simulator (docs/rules.md): `POST …/collections/{c}/rules/simulate` with the secret key
 * runs the collection's stored rules with the real engine and says allowed or refused; for reads
 * it answers the residual predicate the store would run.
 */
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { client, type Client } from './client';

let t: TestPlinth;
let api: Client;

const simulate = (body: object, key: 'secret' | 'public' = 'secret', collection = 'sim_notes') =>
  api.post(`/collections/${collection}/rules/simulate`, body, key);

const alice = { uid: 'user-alice', email: 'alice@example.com', email_verified: true };
const bob = { uid: 'user-bob' };

beforeAll(async () => {
  t = await startTestPlinth();
  api = client(t);
  await api
    .post('/collections', {
      name: 'sim_notes',
      fields: { owner: { type: 'text', required: true }, body: { type: 'text' } },
      rules: {
        read: 'auth != null && record.owner == auth.uid',
        create: 'auth != null && data.owner == auth.uid',
        update: 'auth != null && record.owner == auth.uid && data.owner == record.owner',
        delete: "auth != null && (record.owner == auth.uid || auth.claims.role == 'admin')",
      },
    })
    .expect(201);
});
afterAll(() => t.close());

describe('allowed', () => {
  it('the owner may read, create, update and delete their record', async () => {
    const record = { owner: alice.uid, body: 'hi' };
    for (const body of [
      { operation: 'read', auth: alice, record },
      { operation: 'create', auth: alice, data: record },
      { operation: 'update', auth: alice, record, data: { body: 'changed' } },
      { operation: 'delete', auth: alice, record },
    ]) {
      const res = await simulate(body);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ allowed: true, operation: body.operation });
      expect(typeof res.body.reason).toBe('string');
    }
  });

  it('claims count: an admin claim may delete anyone\'s record', async () => {
    const res = await simulate({ operation: 'delete', auth: { uid: 'x', claims: { role: 'admin' } }, record: { owner: alice.uid } });
    expect(res.status).toBe(200);
    expect(res.body.allowed).toBe(true);
  });
});

describe('refused', () => {
  it("another user is refused on the owner's record, for every operation", async () => {
    const record = { owner: alice.uid, body: 'hi' };
    for (const body of [
      { operation: 'read', auth: bob, record },
      { operation: 'create', auth: bob, data: record },
      { operation: 'update', auth: bob, record, data: { body: 'x' } },
      { operation: 'update', auth: alice, record, data: { owner: bob.uid } },
      { operation: 'delete', auth: bob, record },
    ]) {
      const res = await simulate(body);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ allowed: false, operation: body.operation });
    }
  });

  it('an anonymous caller is refused every read, with the residual false', async () => {
    const res = await simulate({ operation: 'read', auth: null });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ allowed: false, residual: false });
  });

  it('an operation without a rule is refused, and the reason says so', async () => {
    await api.post('/collections', { name: 'sim_bare', fields: { owner: { type: 'text' } } }).expect(201);
    const res = await simulate({ operation: 'create', auth: alice, data: { owner: alice.uid } }, 'secret', 'sim_bare');
    expect(res.status).toBe(200);
    expect(res.body.allowed).toBe(false);
    expect(res.body.reason).toMatch(/no create rule/);
  });
});

describe('residual', () => {
  it('a read without a record answers the predicate the store would run for this user', async () => {
    const res = await simulate({ operation: 'read', auth: alice });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ allowed: true, residual: ['owner', '==', alice.uid] });
  });
});

describe('bad input', () => {
  it.each([
    [{ auth: alice }, 'operation'],
    [{ operation: 'list', auth: alice }, 'operation'],
    [{ operation: 'read', auth: 'alice' }, 'auth'],
    [{ operation: 'read', auth: { email: 'a@b.c' } }, 'auth.uid'],
    [{ operation: 'read', auth: { uid: 'a', claims: [1] } }, 'auth.claims'],
    [{ operation: 'create', auth: alice }, 'data'],
    [{ operation: 'delete', auth: alice, record: 'x' }, 'record'],
    [{ operation: 'read', extra: 1 }, 'extra'],
  ])('%j → 400 naming %s', async (body, field) => {
    const res = await simulate(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_request', details: { field } });
  });

  it('needs the secret key (403 with the public key) and an existing collection (404)', async () => {
    expect((await simulate({ operation: 'read' }, 'public')).status).toBe(403);
    const missing = await simulate({ operation: 'read' }, 'secret', 'no_such');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('not_found');
  });
});

describe('rules/validate (the dashboard checks rules as they are typed)', () => {
  const validate = (collection: string, body: object, key: 'secret' | 'public' = 'secret') =>
    api.post(`/collections/${collection}/rules/validate`, body, key);

  it('accepts valid rules against the stored fields, or against given fields for a new collection', async () => {
    expect((await validate('sim_notes', { rules: { read: 'record.owner == auth.uid' } })).body).toEqual({ valid: true });
    const fresh = await validate('not_yet', { fields: { owner: { type: 'text' } }, rules: { delete: 'record.owner == auth.uid' } });
    expect(fresh.status).toBe(200);
    expect((await api.get('/collections/not_yet')).status).toBe(404);
  });

  it('a typo is a 400 naming the rule and the position, as saving would answer', async () => {
    const res = await validate('sim_notes', { rules: { read: 'record.owner == auth.uidd' } });
    expect(res.status).toBe(400);
    expect(res.body.details).toMatchObject({ field: 'rules.read', rule: 'read', position: expect.any(Number) });
    const unknownField = await validate('sim_notes', { rules: { read: 'record.ownr == auth.uid' } });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.details).toMatchObject({ field: 'rules.read', position: 0 });
  });

  it('needs the secret key, and fields when the collection does not exist', async () => {
    expect((await validate('sim_notes', { rules: {} }, 'public')).status).toBe(403);
    expect((await validate('not_yet', { rules: { read: 'true' } })).status).toBe(404);
  });
});
