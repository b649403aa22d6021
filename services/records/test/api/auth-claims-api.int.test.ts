/**
 * Auth users' custom claims in rules (`auth.token.<name>`), minted-token revocation, and the
 * error answers for a user token in the wrong place — through the real gateway, in both
 * topologies (standalone in-process; cluster: separate processes, Redis sessions).
 */
import request from 'supertest';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';

const PASSWORD = 'claims over http password';
const TICKETS = {
  name: 'tickets',
  fields: { owner: { type: 'text' }, body: { type: 'text' } },
  rules: {
    read: 'auth.token.role == "admin" || record.owner == auth.uid',
    create: 'auth != null && data.owner == auth.uid',
    delete: 'auth.claims.role == "admin"',
  },
};
const SIGNED_IN = { name: 'memos', fields: { body: { type: 'text' } }, rules: { read: 'auth != null', create: 'auth != null' } };

let t: TestPlinth;
const at = (path: string) => `/v1/projects/${t.project.id}${path}`;
const pub = (method: 'get' | 'post' | 'delete', path: string) => request(t.app)[method](at(path)).set('Authorization', `Bearer ${t.project.publicKey}`);
const secret = (method: 'get' | 'post' | 'patch', path: string) => request(t.app)[method](at(path)).set('Authorization', `Bearer ${t.project.secretKey}`);

async function signUp(email: string): Promise<{ uid: string; access: string; refresh: string }> {
  const res = await pub('post', '/auth/signup').send({ email, password: PASSWORD });
  expect(res.status).toBe(201);
  return { uid: res.body.user.id, access: res.body.access_token, refresh: res.body.refresh_token };
}

beforeAll(async () => {
  t = await startTestPlinth();
  await secret('patch', '/settings/auth').send({ enabled: true, send_verification_on_signup: false }).expect(200);
  await secret('post', '/collections').send(TICKETS).expect(201);
  await secret('post', '/collections').send(SIGNED_IN).expect(201);
});
afterAll(() => t.close());

describe('custom claims of Auth users in rules', () => {
  it('auth.token.role == "admin": a claim set by the admin API on a signed-up user takes effect at the next refresh', async () => {
    const ann = await signUp('ann@example.com');
    const ben = await signUp('ben@example.com');
    const bens = await pub('post', '/collections/tickets/records').set('X-Db-User-Token', ben.access).send({ data: { owner: ben.uid, body: 'b' } });
    expect(bens.status).toBe(201);
    const id = bens.body.record.id as string;

    const before = await pub('get', '/collections/tickets/records').set('X-Db-User-Token', ann.access);
    expect(before.status).toBe(200);
    expect(before.body.records).toEqual([]);

    const patched = await secret('patch', `/auth/users/${ann.uid}`).send({ claims: { role: 'admin' } });
    expect(patched.status).toBe(200);
    expect(patched.body.user.claims).toEqual({ role: 'admin' });
    // The old token still carries no role: the change waits for the next refresh.
    expect((await pub('get', '/collections/tickets/records').set('X-Db-User-Token', ann.access)).body.records).toEqual([]);

    const refreshed = await pub('post', '/auth/refresh').send({ refresh_token: ann.refresh });
    expect(refreshed.status).toBe(200);
    const admin = refreshed.body.access_token as string;
    const after = await pub('get', '/collections/tickets/records').set('X-Db-User-Token', admin);
    expect(after.status).toBe(200);
    expect(after.body.records.map((r: { id: string }) => r.id)).toEqual([id]);
    // auth.claims.<name> still reads the same claim.
    expect((await pub('delete', `/collections/tickets/records/${id}`).set('X-Db-User-Token', ben.access)).status).toBe(403);
    expect((await pub('delete', `/collections/tickets/records/${id}`).set('X-Db-User-Token', admin)).status).toBe(200);
  });
});

describe('minted tokens can be revoked', () => {
  it('POST /auth/tokens/revoke {user_id} ends every token minted for the user; a token minted afterwards works', async () => {
    const mint = async () => (await secret('post', '/auth/tokens').send({ user_id: 'ext-42', claims: { role: 'agent' } }).expect(200)).body.access_token as string;
    const a = await mint();
    const b = await mint();
    for (const tok of [a, b]) expect((await pub('get', '/collections/memos/records').set('X-Db-User-Token', tok)).status).toBe(200);
    const r = await secret('post', '/auth/tokens/revoke').send({ user_id: 'ext-42' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ revoked: 2 });
    for (const tok of [a, b]) expect((await pub('get', '/collections/memos/records').set('X-Db-User-Token', tok)).status).toBe(401);
    expect((await pub('get', '/collections/memos/records').set('X-Db-User-Token', await mint())).status).toBe(200);
  });

  it('POST /auth/tokens/revoke {sid} ends one minted token', async () => {
    const tok = (await secret('post', '/auth/tokens').send({ user_id: 'ext-7' }).expect(200)).body.access_token as string;
    const sid = JSON.parse(Buffer.from(tok.split('.')[1]!, 'base64url').toString('utf8')).sid as string;
    expect(sid).toMatch(/^mnt_/);
    expect((await secret('post', '/auth/tokens/revoke').send({ sid })).body).toEqual({ revoked: 1 });
    expect((await pub('get', '/collections/memos/records').set('X-Db-User-Token', tok)).status).toBe(401);
    expect((await secret('post', '/auth/tokens/revoke').send({})).status).toBe(400);
    expect((await pub('post', '/auth/tokens/revoke').send({ sid })).status).toBe(403);
  });
});

describe('a user token in the wrong place', () => {
  it('records with X-Auth-User-Token instead of X-Db-User-Token → 400 naming the right header, never an anonymous read', async () => {
    const cy = await signUp('cy@example.com');
    const r = await pub('get', '/collections/memos/records').set('X-Auth-User-Token', cy.access);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'invalid_request', message: expect.stringContaining('X-Db-User-Token'), details: { header: 'X-Db-User-Token' } });
    const w = await pub('post', '/collections/memos/records').set('X-Auth-User-Token', cy.access).send({ data: { body: 'x' } });
    expect(w.status).toBe(400);
  });

  it('Auth with X-Db-User-Token instead of X-Auth-User-Token → 400 naming the right header', async () => {
    const dee = await signUp('dee@example.com');
    const r = await pub('get', '/auth/user').set('X-Db-User-Token', dee.access);
    expect(r.status).toBe(400);
    expect(r.body.details).toEqual({ header: 'X-Auth-User-Token' });
  });

  it('a JWT sent as the project key → 401 saying Authorization carries the project key and where the user token goes', async () => {
    const eve = await signUp('eve@example.com');
    const r = await request(t.app).get(at('/collections/memos/records')).set('Authorization', `Bearer ${eve.access}`);
    expect(r.status).toBe(401);
    expect(r.body.error).toBe('unauthorized');
    expect(r.body.message).toMatch(/Authorization carries the project key/);
    expect(r.body.message).toMatch(/X-Db-User-Token/);
    expect(r.body.message).toMatch(/X-Auth-User-Token/);
  });
});
