import { waitFor } from '@plinth/shared/testing/wait-for';
import { startCluster, type Cluster } from '@plinth/testing/cluster';
import { SmtpCapture } from '../../services/mailer/test/support/smtp-capture';
import { call, enableAuth, projectCall, type ProjectAccess, type SessionBody, type UserBody } from './support/api';
import { capturedFor, PASSWORD, smtpReader } from './support/mail-flows';
import { selfServiceFlows } from './support/self-service-flows';
import { REDIS_URL, redisRun } from './support/redis-run';

/**
 * Issue 7, auth: the gateway in front of TWO auth and TWO records processes, sharing only Redis
 * (sessions, revocations, rate limits, mail queue). The gateway round-robins, so consecutive
 * requests of one session land on different replicas: nothing may live in one instance.
 */
describe('auth across replicas: 2 auth and 2 records processes behind the gateway', () => {
  const run = redisRun('auth');
  const smtp = new SmtpCapture();
  let cluster: Cluster;
  let p: ProjectAccess;
  let seq = 0;

  /** API requests each replica of `service` has answered so far (from its own /metrics). */
  async function served(service: 'auth' | 'records'): Promise<number[]> {
    const replicas = cluster.processes.filter((x) => x.name.startsWith(`${service}-`));
    return Promise.all(
      replicas.map(async (x) => {
        const text = await (await fetch(`${x.url}/metrics`)).text();
        return [...text.matchAll(/^plinth_http_requests_total\{[^}]*\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
      }),
    );
  }

  async function servedDuring(service: 'auth' | 'records', work: () => Promise<void>): Promise<number[]> {
    const before = await served(service);
    await work();
    const after = await served(service);
    return after.map((n, i) => n - before[i]!);
  }

  const signUp = async (email = `user${++seq}@example.com`): Promise<SessionBody> => {
    const res = await projectCall<SessionBody>(p, 'POST', '/auth/signup', { key: p.publicKey, body: { email, password: PASSWORD } });
    expect(res.status).toBe(201);
    return res.body;
  };
  const signIn = async (email: string, password = PASSWORD) =>
    projectCall<SessionBody>(p, 'POST', '/auth/signin', { key: p.publicKey, body: { email, password } });
  const me = (token: string) => projectCall<{ user: UserBody }>(p, 'GET', '/auth/user', { key: p.publicKey, userToken: token });
  const refresh = (token: string) => projectCall<SessionBody>(p, 'POST', '/auth/refresh', { key: p.publicKey, body: { refresh_token: token } });
  /** Reads `id` from the `notes` collection as the holder of `token` (public key, rules apply). */
  const readNote = (id: string, token: string) =>
    projectCall<{ record: { id: string } }>(p, 'GET', `/collections/notes/records/${id}`, { key: p.publicKey, dbUserToken: token });

  /** Statuses of `n` consecutive calls: with round-robin, both replicas answer some of them. */
  async function statuses(n: number, fn: () => Promise<{ status: number }>): Promise<number[]> {
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push((await fn()).status);
    return out;
  }

  async function noteOwnedBy(userId: string): Promise<string> {
    const res = await projectCall<{ record: { id: string } }>(p, 'POST', '/collections/notes/records', {
      key: p.secretKey,
      body: { data: { owner: userId, body: 'hello' } },
    });
    expect(res.status).toBe(201);
    return res.body.record.id;
  }

  beforeAll(async () => {
    await smtp.start(0);
    cluster = await startCluster({
      replicas: { auth: 2, records: 2 },
      env: { REDIS_URL, SMTP_URL: smtp.url, PLINTH_MAIL_QUEUE: run.queueName },
    });
    p = { url: cluster.url, ...(await cluster.createProject(run.projectId('e2e-auth'))) };
    await enableAuth(p, { send_verification_on_signup: false });
    const notes = await projectCall(p, 'POST', '/collections', {
      key: p.secretKey,
      body: {
        name: 'notes',
        fields: { owner: { type: 'text', required: true }, body: { type: 'text' } },
        rules: { read: 'auth != null && record.owner == auth.uid' },
      },
    });
    expect(notes.status).toBe(201);
    const docs = await projectCall(p, 'POST', '/collections', {
      key: p.secretKey,
      body: { name: 'docs', fields: { title: { type: 'text' } }, rules: { read: 'auth != null && auth.claims.role == "editor"' } },
    });
    expect(docs.status).toBe(201);
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
    await smtp.stop();
    await run.cleanUp();
  });

  it('runs two auth and two records replicas', () => {
    expect(cluster.processes.map((x) => x.name)).toEqual(['auth-0', 'auth-1', 'records-0', 'records-1', 'mailer-0', 'gateway']);
  });

  it('a session made on one replica is used on both: sign-up, sign-in, /user, record reads', async () => {
    const email = 'ada@example.com';
    let session!: SessionBody;
    const auth = await servedDuring('auth', async () => {
      const signup = await signUp(email);
      expect(signup.user).toMatchObject({ email, email_verified: false, has_password: true });
      expect(JSON.stringify(signup)).not.toContain(PASSWORD);
      const signin = await signIn(email);
      expect(signin.status).toBe(200);
      session = signin.body;
      for (let i = 0; i < 6; i++) {
        const res = await me(session.access_token);
        expect(res).toMatchObject({ status: 200, body: { user: { id: signup.user.id, email } } });
      }
      expect((await signIn(email, 'not the password')).status).toBe(401);
    });
    expect(auth).toHaveLength(2);
    expect(auth.every((n) => n >= 3)).toBe(true);

    const id = await noteOwnedBy(session.user.id);
    const records = await servedDuring('records', async () => {
      expect(await statuses(4, () => readNote(id, session.access_token))).toEqual([200, 200, 200, 200]);
      const stranger = await signUp();
      expect(await statuses(2, () => readNote(id, stranger.access_token))).toEqual([404, 404]);
    });
    expect(records.every((n) => n >= 2)).toBe(true);
  });

  it('rotates refresh tokens across replicas; reusing an older ancestor revokes the whole family', async () => {
    const s0 = await signUp();
    const r1 = await refresh(s0.refresh_token);
    expect(r1.status).toBe(200);
    expect(r1.body.refresh_token).not.toBe(s0.refresh_token);
    expect(r1.body.user.id).toBe(s0.user.id);
    expect((await me(r1.body.access_token)).status).toBe(200);

    // Two tabs: the parent again, within the 10 s window, on the other replica → the active token.
    const again = await refresh(s0.refresh_token);
    expect(again.status).toBe(200);
    expect(again.body.refresh_token).toBe(r1.body.refresh_token);

    const r2 = await refresh(r1.body.refresh_token);
    expect(r2.status).toBe(200);
    expect((await me(r2.body.access_token)).status).toBe(200);

    // s0 is now a grandparent: presenting it is reuse, and ends the family everywhere.
    expect((await refresh(s0.refresh_token)).status).toBe(401);
    expect((await refresh(r2.body.refresh_token)).status).toBe(401);
    expect(await statuses(2, () => me(r2.body.access_token))).toEqual([401, 401]);
    expect(await statuses(2, () => me(s0.access_token))).toEqual([401, 401]);
  });

  it('sign-out ends that session on every replica and no other', async () => {
    const email = `out${++seq}@example.com`;
    const a = await signUp(email);
    const b = (await signIn(email)).body;
    const out = await projectCall(p, 'POST', '/auth/signout', { key: p.publicKey, body: { refresh_token: a.refresh_token } });
    expect(out).toEqual({ status: 200, body: { signed_out: true } });
    expect(await statuses(2, () => me(a.access_token))).toEqual([401, 401]);
    expect(await statuses(2, () => refresh(a.refresh_token))).toEqual([401, 401]);
    expect(await statuses(2, () => me(b.access_token))).toEqual([200, 200]);
  });

  it('sign-out-all makes existing access tokens fail on /user and on record reads (JWKS + Redis revocations)', async () => {
    const email = `all${++seq}@example.com`;
    const a = await signUp(email);
    const b = (await signIn(email)).body;
    const id = await noteOwnedBy(a.user.id);
    expect(await statuses(2, () => readNote(id, a.access_token))).toEqual([200, 200]);
    expect(await statuses(2, () => readNote(id, b.access_token))).toEqual([200, 200]);

    const all = await projectCall(p, 'POST', '/auth/signout-all', { key: p.publicKey, userToken: a.access_token });
    expect(all).toEqual({ status: 200, body: { signed_out: true, everywhere: true } });

    for (const token of [a.access_token, b.access_token]) {
      expect(await statuses(2, () => me(token))).toEqual([401, 401]);
      const reads = await Promise.all([readNote(id, token), readNote(id, token)]);
      for (const res of reads) {
        expect(res).toMatchObject({ status: 401, body: { error: 'unauthorized', details: { header: 'X-Db-User-Token', reason: 'revoked' } } });
      }
    }
    expect((await refresh(b.refresh_token)).status).toBe(401);
    // A new sign-in works again.
    const c = (await signIn(email)).body;
    expect(await statuses(2, () => readNote(id, c.access_token))).toEqual([200, 200]);
  });

  it('admin: list, disable (ends sessions on both services) and delete (frees the e-mail)', async () => {
    const email = `admin${++seq}@example.com`;
    const s = await signUp(email);
    const id = await noteOwnedBy(s.user.id);

    const list = await projectCall<{ users: UserBody[]; total: number }>(p, 'GET', `/auth/users?search=${encodeURIComponent(email)}`, {
      key: p.secretKey,
    });
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(1);
    expect(list.body.users.map((u) => u.id)).toEqual([s.user.id]);
    expect((await projectCall(p, 'GET', '/auth/users', { key: p.publicKey })).status).toBe(403);

    const disable = await projectCall<{ user: UserBody }>(p, 'PATCH', `/auth/users/${s.user.id}`, {
      key: p.secretKey,
      body: { status: 'disabled' },
    });
    expect(disable).toMatchObject({ status: 200, body: { user: { id: s.user.id, status: 'disabled' } } });
    expect(await statuses(2, () => me(s.access_token))).toEqual([401, 401]);
    expect(await statuses(2, async () => readNote(id, s.access_token))).toEqual([401, 401]);
    expect(await statuses(2, () => signIn(email))).toEqual([401, 401]);

    // An admin can still send the disabled user a reset mail; it goes through the shared queue.
    const sendReset = await projectCall(p, 'POST', `/auth/users/${s.user.id}/send-reset`, { key: p.secretKey });
    expect(sendReset).toEqual({ status: 200, body: { sent: true } });
    await waitFor('the reset mail', () => capturedFor(smtp, email, 'reset').length === 1);

    const del = await projectCall(p, 'DELETE', `/auth/users/${s.user.id}`, { key: p.secretKey });
    expect(del).toEqual({ status: 200, body: { deleted: true } });
    expect(await statuses(2, () => projectCall(p, 'GET', `/auth/users/${s.user.id}`, { key: p.secretKey }))).toEqual([404, 404]);
    const again = await signUp(email);
    expect(again.user.id).not.toBe(s.user.id);
  });

  it('minted tokens are verified by both records replicas and refused by /auth/user', async () => {
    const created = await projectCall(p, 'POST', '/collections/docs/records', { key: p.secretKey, body: { data: { title: 'plan' } } });
    expect(created.status).toBe(201);
    const mint = (role: string) =>
      projectCall<{ access_token: string; token_type: string; expires_in: number }>(p, 'POST', '/auth/tokens', {
        key: p.secretKey,
        body: { user_id: 'crm-4411', claims: { role }, expires_in: 600 },
      });
    const editor = await mint('editor');
    expect(editor).toMatchObject({ status: 200, body: { token_type: 'Bearer', expires_in: 600 } });
    const list = (token: string) =>
      projectCall<{ records: Array<{ title: string }> }>(p, 'GET', '/collections/docs/records', { key: p.publicKey, dbUserToken: token });
    for (let i = 0; i < 2; i++) {
      const res = await list(editor.body.access_token);
      expect(res.status).toBe(200);
      expect(res.body.records.map((r) => r.title)).toEqual(['plan']);
    }
    const viewer = await mint('viewer');
    expect(await statuses(2, () => list(viewer.body.access_token))).toEqual([403, 403]);
    expect((await me(editor.body.access_token)).status).toBe(401);
    expect((await projectCall(p, 'POST', '/auth/tokens', { key: p.publicKey, body: { user_id: 'x' } })).status).toBe(403);
    // A token for another project is refused by records (audience).
    const other = { url: cluster.url, ...(await cluster.createProject(run.projectId('e2e-other'))) };
    const foreign = await call<{ access_token: string }>(cluster.url, 'POST', `/v1/projects/${other.id}/auth/tokens`, {
      key: other.secretKey,
      body: { user_id: 'crm-4411', claims: { role: 'editor' } },
    });
    expect((await list(foreign.body.access_token)).status).toBe(401);
  });

  it('self-service across replicas, mail over SMTP: profile, change password, change e-mail, delete with a code', async () => {
    await selfServiceFlows(p, smtpReader(smtp), 'selfsvc@example.com');
  });
});
