import request from 'supertest';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { findSecrets } from './no-secrets';

const PASSWORD = 'standalone harness password';

/** Auth inside the real standalone composition (gateway + every service), as `npm start` runs it. */
describe('Auth in the standalone composition (gateway test harness)', () => {
  let t: TestPlinth;
  const bodies: unknown[] = [];
  beforeAll(async () => {
    t = await startTestPlinth({ env: { PLINTH_MAIL_POLL_MS: '20' } });
  });
  afterAll(async () => {
    await t.close();
  });

  const at = (path: string) => `/v1/projects/${t.project.id}${path}`;
  const keep = <R extends { body: unknown }>(r: R): R => {
    bodies.push(r.body);
    return r;
  };

  it('Auth is disabled on a new project: 404 on every Auth endpoint, JWKS still served without a key', async () => {
    const r = keep(await request(t.app).post(at('/auth/signup')).set('authorization', `Bearer ${t.project.publicKey}`).send({ email: 'a@example.com', password: PASSWORD }));
    expect(r.status).toBe(404);
    expect(r.body.error).toBe('not_found');
    const jwks = keep(await request(t.app).get(at('/auth/jwks.json')));
    expect(jwks.status).toBe(200);
    expect(jwks.body.keys).toHaveLength(1);
  });

  it('a secret key enables Auth; a public key may not; no key → 401', async () => {
    expect(keep(await request(t.app).patch(at('/settings/auth')).send({ enabled: true })).status).toBe(401);
    const pub = keep(await request(t.app).patch(at('/settings/auth')).set('authorization', `Bearer ${t.project.publicKey}`).send({ enabled: true }));
    expect(pub.status).toBe(403);
    const sec = keep(await request(t.app).patch(at('/settings/auth')).set('authorization', `Bearer ${t.project.secretKey}`).send({ enabled: true }));
    expect(sec.status).toBe(200);
    expect(sec.body.enabled).toBe(true);
  });

  it('sign-up, /user, refresh and sign-out work end to end', async () => {
    const pk = `Bearer ${t.project.publicKey}`;
    const up = keep(await request(t.app).post(at('/auth/signup')).set('authorization', pk).send({ email: 'ada@example.com', password: PASSWORD }));
    expect(up.status).toBe(201);
    const me = keep(await request(t.app).get(at('/auth/user')).set('authorization', pk).set('x-auth-user-token', up.body.access_token));
    expect(me.body.user.email).toBe('ada@example.com');
    const ref = keep(await request(t.app).post(at('/auth/refresh')).set('authorization', pk).send({ refresh_token: up.body.refresh_token }));
    expect(ref.status).toBe(200);
    const out = keep(await request(t.app).post(at('/auth/signout')).set('authorization', pk).send({ refresh_token: ref.body.refresh_token }));
    expect(out.body).toEqual({ signed_out: true });
    const after = keep(await request(t.app).get(at('/auth/user')).set('authorization', pk).set('x-auth-user-token', ref.body.access_token));
    expect(after.status).toBe(401);
    const noKey = keep(await request(t.app).get(at('/auth/user')).set('x-auth-user-token', ref.body.access_token));
    expect(noKey.status).toBe(401);
  });

  it("the verification mail of a sign-up reaches the mailer's dev mailbox, and its token verifies", async () => {
    const pk = `Bearer ${t.project.publicKey}`;
    const up = keep(await request(t.app).post(at('/auth/signup')).set('authorization', pk).send({ email: 'mail@example.com', password: PASSWORD }));
    expect(up.status).toBe(201);
    let message: { kind: string; data: { token: string } } | undefined;
    const deadline = Date.now() + 10_000;
    while (!message && Date.now() < deadline) {
      const box = keep(await request(t.app).get(at('/mailbox?to=mail@example.com')).set('authorization', `Bearer ${t.project.secretKey}`));
      message = (box.body.messages as Array<{ kind: string; data: { token: string } }>).find((m) => m.kind === 'verify');
      if (!message) await new Promise((r) => setTimeout(r, 20));
    }
    expect(message?.data.token).toEqual(expect.any(String));
    const confirm = keep(await request(t.app).post(at('/auth/verify/confirm')).set('authorization', pk).send({ token: message?.data.token }));
    expect(confirm.status).toBe(200);
    expect(confirm.body.user.email_verified).toBe(true);
  });

  it('admin and minting refuse the public key with 403', async () => {
    const pk = `Bearer ${t.project.publicKey}`;
    expect(keep(await request(t.app).get(at('/auth/users')).set('authorization', pk)).status).toBe(403);
    expect(keep(await request(t.app).post(at('/auth/tokens')).set('authorization', pk).send({ user_id: 'u' })).status).toBe(403);
    const minted = keep(await request(t.app).post(at('/auth/tokens')).set('authorization', `Bearer ${t.project.secretKey}`).send({ user_id: 'u' }));
    expect(minted.status).toBe(200);
    expect(minted.body.token_type).toBe('Bearer');
  });

  it('no response contained the password or a hash of it', () => {
    expect(bodies.length).toBeGreaterThan(5);
    expect(findSecrets(bodies, new Set([PASSWORD]))).toEqual([]);
  });
});
