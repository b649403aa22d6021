/**
 * Security rules end to end (docs/rules.md, docs/rules.md): the real gateway, the real auth
 * service issuing ES256 tokens to signed-up users, and the records service verifying them as
 * `X-Db-User-Token`. Each worked example of docs/rules.md is exercised here with real users.
 */
import request from 'supertest';
import { startTestPlinth, type TestPlinth, type TestProject } from '@plinth/testing/harness';
import { OWNER_ONLY, PUBLIC_READ_OWNER_WRITE, ROLE_CLAIMS, VERIFIED_EMAIL_ONLY } from '../rules/doc-examples';
import { qs } from './client';

const PASSWORD = 'rules over http password';

interface SignedIn {
  uid: string;
  email: string;
  token: string;
}

type Row = { id: string; [field: string]: unknown };

let t: TestPlinth;

function at(project: TestProject, path: string): string {
  return `/v1/projects/${project.id}${path}`;
}

/** Requests with the project's public key and, when given, a user token. */
function as(token?: string, project: TestProject = t.project) {
  const wrap = (r: request.Test): request.Test => {
    r.set('Authorization', `Bearer ${project.publicKey}`);
    return token === undefined ? r : r.set('X-Db-User-Token', token);
  };
  return {
    get: (path: string) => wrap(request(t.app).get(at(project, `/collections${path}`))),
    post: (path: string, body: object) => wrap(request(t.app).post(at(project, `/collections${path}`))).send(body),
    patch: (path: string, body: object) => wrap(request(t.app).patch(at(project, `/collections${path}`))).send(body),
    delete: (path: string) => wrap(request(t.app).delete(at(project, `/collections${path}`))),
  };
}

const secret = (method: 'get' | 'post' | 'patch', path: string, project: TestProject = t.project) =>
  request(t.app)[method](at(project, path)).set('Authorization', `Bearer ${project.secretKey}`);

async function enableAuth(project: TestProject): Promise<void> {
  await secret('patch', '/settings/auth', project).send({ enabled: true }).expect(200);
}

async function signUp(email: string, project: TestProject = t.project): Promise<SignedIn> {
  const res = await request(t.app)
    .post(at(project, '/auth/signup'))
    .set('Authorization', `Bearer ${project.publicKey}`)
    .send({ email, password: PASSWORD });
  expect(res.status).toBe(201);
  return { uid: res.body.user.id, email, token: res.body.access_token };
}

async function signIn(email: string): Promise<string> {
  const res = await request(t.app).post(at(t.project, '/auth/signin')).set('Authorization', `Bearer ${t.project.publicKey}`).send({ email, password: PASSWORD });
  expect(res.status).toBe(200);
  return res.body.access_token;
}

async function mint(userId: string, claims: object): Promise<string> {
  const res = await secret('post', '/auth/tokens').send({ user_id: userId, claims });
  expect(res.status).toBe(200);
  return res.body.access_token;
}

function payloadOf(token: string): { [claim: string]: unknown } {
  return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'));
}

async function createAs(token: string, collection: string, data: object): Promise<Row> {
  const res = await as(token).post(`/${collection}/records`, { data });
  expect(res.status).toBe(201);
  return res.body.record;
}

const ids = (rows: Row[]): string[] => rows.map((r) => r.id).sort();

let alice: SignedIn;
let bob: SignedIn;

beforeAll(async () => {
  t = await startTestPlinth({ env: { PLINTH_MAIL_POLL_MS: '20' } });
  await enableAuth(t.project);
  for (const example of [OWNER_ONLY, PUBLIC_READ_OWNER_WRITE, VERIFIED_EMAIL_ONLY, ROLE_CLAIMS]) {
    await secret('post', '/collections').send(example).expect(201);
  }
  alice = await signUp('alice@example.com');
  bob = await signUp('bob@example.com');
});
afterAll(() => t.close());

describe('owner-only records (docs/rules.md)', () => {
  let aliceNotes: Row[];
  let bobNotes: Row[];
  beforeAll(async () => {
    aliceNotes = [await createAs(alice.token, 'notes', { owner: alice.uid, body: 'a1' }), await createAs(alice.token, 'notes', { owner: alice.uid, body: 'a2' })];
    bobNotes = [await createAs(bob.token, 'notes', { owner: bob.uid, body: 'b1' }), await createAs(bob.token, 'notes', { owner: bob.uid, body: 'b2' })];
  });

  it("a query returns only the caller's records, even when the where asks for another user's", async () => {
    const mine = await as(alice.token).get('/notes/records');
    expect(mine.status).toBe(200);
    expect(ids(mine.body.records)).toEqual(ids(aliceNotes));
    expect(ids((await as(bob.token).get('/notes/records')).body.records)).toEqual(ids(bobNotes));
    const widened = await as(alice.token).get(`/notes/records${qs({ where: [['owner', '==', bob.uid]] })}`);
    expect(widened.status).toBe(200);
    expect(widened.body.records).toEqual([]);
  });

  it("another user's record is 404 on get, patch and delete, and stays unchanged", async () => {
    const target = bobNotes[0] as Row;
    const get = await as(alice.token).get(`/notes/records/${target.id}`);
    expect(get.status).toBe(404);
    expect(get.body.error).toBe('not_found');
    expect((await as(alice.token).patch(`/notes/records/${target.id}`, { data: { body: 'mine now' } })).status).toBe(404);
    expect((await as(alice.token).delete(`/notes/records/${target.id}`)).status).toBe(404);
    expect((await secret('get', `/collections/notes/records/${target.id}`)).body.record).toEqual(target);
  });

  it('creating a record for another owner is 403 and stores nothing', async () => {
    const forged = await as(alice.token).post('/notes/records', { data: { owner: bob.uid, body: 'forged' } });
    expect(forged.status).toBe(403);
    expect(forged.body.error).toBe('forbidden');
    const stored = await secret('get', `/collections/notes/records${qs({ where: [['body', '==', 'forged']] })}`);
    expect(stored.body.records).toEqual([]);
  });

  it('the owner updates and deletes their own record, but cannot hand it to someone else (403: they can read it)', async () => {
    const own = await createAs(alice.token, 'notes', { owner: alice.uid, body: 'temp' });
    const edited = await as(alice.token).patch(`/notes/records/${own.id}`, { data: { body: 'edited' } });
    expect(edited.status).toBe(200);
    expect(edited.body.record).toMatchObject({ body: 'edited', version: 2 });
    expect((await as(alice.token).patch(`/notes/records/${own.id}`, { data: { owner: bob.uid } })).status).toBe(403);
    expect((await as(alice.token).delete(`/notes/records/${own.id}`)).status).toBe(200);
    expect((await secret('get', `/collections/notes/records/${own.id}`)).status).toBe(404);
  });

  it('without a user token the read rule is false: 403 saying that no user token was sent', async () => {
    const res = await as().get('/notes/records');
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ error: 'forbidden', details: { user_token: 'missing' } });
    expect(res.body.message).toContain('No user token was sent');
    const sub = await as().post('/notes/subscribe', {});
    expect(sub.body).toMatchObject({ error: 'forbidden', details: { user_token: 'missing' } });
    // A signed-in user the rule refuses is told no such thing.
    const refused = await as(bob.token).post('/notes/records', { data: { owner: alice.uid, body: 'x' } });
    expect(refused.status).toBe(403);
    expect(refused.body).not.toHaveProperty('details');
    expect(refused.body.message).not.toContain('user token');
  });

  it("subscribe returns the caller's uid inside the predicate, the token's expiry and a snapshot of only their records", async () => {
    const res = await as(alice.token).post('/notes/subscribe', { snapshot: true });
    expect(res.status).toBe(200);
    const sub = res.body.subscription;
    expect(sub).toMatchObject({
      collection: 'notes',
      revision: 1,
      predicate: ['owner', '==', alice.uid],
      order: { orderBy: 'created_at', direction: 'asc' },
      limit: 50,
      expires_at: new Date(Number(payloadOf(alice.token).exp) * 1000).toISOString(),
    });
    expect(ids(sub.snapshot.records)).toEqual(ids(aliceNotes));
    expect(sub.snapshot.cursor).toBeNull();

    const filtered = await as(alice.token).post('/notes/subscribe', { where: [['body', '==', 'a2']] });
    expect(filtered.body.subscription.predicate).toEqual({ and: [['body', '==', 'a2'], ['owner', '==', alice.uid]] });
    expect(filtered.body.subscription).not.toHaveProperty('snapshot');
  });

  it('subscribe without a user token → 403; with the secret key → no restriction and no expiry', async () => {
    expect((await as().post('/notes/subscribe', {})).status).toBe(403);
    const res = await secret('post', '/collections/notes/subscribe').send({ snapshot: true });
    expect(res.status).toBe(200);
    expect(res.body.subscription).toMatchObject({ predicate: true, expires_at: null });
    expect(ids(res.body.subscription.snapshot.records)).toEqual(ids([...aliceNotes, ...bobNotes]));
  });
});

/** Expired tokens: test/user-token-expiry.int.test.ts (it needs the auth service's clock in-process). */
describe('user tokens that must be refused with 401', () => {
  const expect401 = async (token: string, reason: string): Promise<void> => {
    for (const res of [await as(token).get('/notes/records'), await as(token).post('/notes/subscribe', {})]) {
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('unauthorized');
      expect(res.body.details).toEqual({ header: 'X-Db-User-Token', reason });
    }
  };
  const encode = (part: object): string => Buffer.from(JSON.stringify(part)).toString('base64url');

  it('a tampered token (the payload changed to another uid, the signature kept)', async () => {
    const [header, , signature] = alice.token.split('.');
    await expect401(`${header}.${encode({ ...payloadOf(alice.token), sub: bob.uid })}.${signature}`, 'invalid');
  });

  it('an unsigned token (alg: none)', async () => {
    await expect401(`${encode({ alg: 'none', typ: 'JWT' })}.${encode(payloadOf(alice.token))}.`, 'algorithm');
  });

  it('a valid token of another project', async () => {
    const other = await t.createProject();
    await enableAuth(other);
    const stranger = await signUp('stranger@example.com', other);
    await secret('post', '/collections', other).send(OWNER_ONLY).expect(201);
    expect((await as(stranger.token, other).get('/notes/records')).status).toBe(200);
    const res = await as(stranger.token).get('/notes/records');
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('unauthorized');
  });
});

describe('public read, owner write (docs/rules.md)', () => {
  let published: Row;
  let draft: Row;
  beforeAll(async () => {
    published = await createAs(alice.token, 'posts', { author: alice.uid, published: true });
    draft = await createAs(alice.token, 'posts', { author: alice.uid, published: false });
  });

  it('everyone reads published posts; only the author also reads the drafts', async () => {
    expect(ids((await as().get('/posts/records')).body.records)).toEqual([published.id]);
    expect(ids((await as(bob.token).get('/posts/records')).body.records)).toEqual([published.id]);
    expect(ids((await as(alice.token).get('/posts/records')).body.records)).toEqual(ids([published, draft]));
    expect((await as(bob.token).get(`/posts/records/${draft.id}`)).status).toBe(404);
  });

  it('only the author writes: another user gets 403 on a post they can read, 404 on a draft they cannot', async () => {
    expect((await as(bob.token).patch(`/posts/records/${published.id}`, { data: { published: false } })).status).toBe(403);
    expect((await as(bob.token).patch(`/posts/records/${draft.id}`, { data: { published: true } })).status).toBe(404);
    expect((await as().post('/posts/records', { data: { author: alice.uid, published: true } })).status).toBe(403);
    expect((await as(bob.token).post('/posts/records', { data: { author: alice.uid, published: true } })).status).toBe(403);
    const publish = await as(alice.token).patch(`/posts/records/${draft.id}`, { data: { published: true } });
    expect(publish.status).toBe(200);
    expect(ids((await as().get('/posts/records')).body.records)).toEqual(ids([published, draft]));
  });
});

describe('verified e-mail only (docs/rules.md)', () => {
  async function verificationToken(email: string): Promise<string> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const box = await secret('get', `/mailbox?to=${encodeURIComponent(email)}`).expect(200);
      const mail = (box.body.messages as Array<{ kind: string; data: { token?: string } }>).find((m) => m.kind === 'verify');
      if (mail?.data.token) return mail.data.token;
      if (Date.now() > deadline) throw new Error(`no verification mail for ${email}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it('an unverified user can neither read nor create', async () => {
    expect(payloadOf(bob.token).email_verified).toBe(false);
    expect((await as(bob.token).get('/reviews/records')).status).toBe(403);
    expect((await as(bob.token).post('/reviews/records', { data: { owner: bob.uid, stars: 5 } })).status).toBe(403);
  });

  it('after confirming the mailed link and signing in again, the user reads and creates; the old token still cannot', async () => {
    const confirm = await request(t.app)
      .post(at(t.project, '/auth/verify/confirm'))
      .set('Authorization', `Bearer ${t.project.publicKey}`)
      // With the account's password: the user who signed up keeps it (docs/auth.md "Proving an address").
      .send({ token: await verificationToken(alice.email), password: PASSWORD });
    expect(confirm.status).toBe(200);
    const verified = await signIn(alice.email);
    expect(payloadOf(verified).email_verified).toBe(true);
    const created = await as(verified).post('/reviews/records', { data: { owner: alice.uid, stars: 4 } });
    expect(created.status).toBe(201);
    const read = await as(verified).get('/reviews/records');
    expect(read.status).toBe(200);
    expect(ids(read.body.records)).toEqual([created.body.record.id]);
    expect((await as(alice.token).get('/reviews/records')).status).toBe(403);
  });
});

describe('role claims (docs/rules.md)', () => {
  let aliceTicket: Row;
  let bobTicket: Row;
  let admin: string;
  beforeAll(async () => {
    aliceTicket = await createAs(alice.token, 'tickets', { owner: alice.uid, status: 'open' });
    bobTicket = await createAs(bob.token, 'tickets', { owner: bob.uid, status: 'open' });
    admin = await mint('usr_support_admin', { role: 'admin' });
  });

  it('a minted token with role "admin" reads every ticket; users read their own; another role is a plain user', async () => {
    expect(ids((await as(admin).get('/tickets/records')).body.records)).toEqual(ids([aliceTicket, bobTicket]));
    expect(ids((await as(alice.token).get('/tickets/records')).body.records)).toEqual([aliceTicket.id]);
    const support = await mint('usr_support', { role: 'support' });
    expect((await as(support).get('/tickets/records')).body.records).toEqual([]);
    const sub = await as(admin).post('/tickets/subscribe', {});
    expect(sub.body.subscription.predicate).toBe(true);
  });

  it('only an admin deletes; an owner who can read their ticket gets 403', async () => {
    expect((await as(alice.token).delete(`/tickets/records/${aliceTicket.id}`)).status).toBe(403);
    expect((await as(admin).delete(`/tickets/records/${bobTicket.id}`)).status).toBe(200);
    expect((await secret('get', `/collections/tickets/records/${bobTicket.id}`)).status).toBe(404);
  });
});

describe('revocation reaches records at once', () => {
  it('sign-out-all makes an existing access token fail on the next record read', async () => {
    const carol = await signUp('carol@example.com');
    expect((await as(carol.token).get('/notes/records')).status).toBe(200);
    const out = await request(t.app)
      .post(at(t.project, '/auth/signout-all'))
      .set('Authorization', `Bearer ${t.project.publicKey}`)
      .set('X-Auth-User-Token', carol.token);
    expect(out.status).toBe(200);
    const after = await as(carol.token).get('/notes/records');
    expect(after.status).toBe(401);
    expect(after.body.details).toEqual({ header: 'X-Db-User-Token', reason: 'revoked' });
  });

  it('disabling a user (secret key) makes their existing access token fail on the next record read', async () => {
    const dave = await signUp('dave@example.com');
    expect((await as(dave.token).get('/notes/records')).status).toBe(200);
    await secret('patch', `/auth/users/${dave.uid}`).send({ status: 'disabled' }).expect(200);
    const after = await as(dave.token).get('/notes/records');
    expect(after.status).toBe(401);
    expect(after.body.details).toEqual({ header: 'X-Db-User-Token', reason: 'revoked' });
  });
});
