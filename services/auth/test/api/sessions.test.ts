import jwt from 'jsonwebtoken';
import { asProjectId } from '@plinth/shared';
import { TEST_REDIS_URL } from '../redis-keys';
import { useAuthTestService, type CallResult } from './auth-test-service';
import { itLeakedNoSecrets } from './no-secrets';

const PASSWORD = 'sessions password 1';

describe.each([
  ['embedded sessions', {} as { [k: string]: string }],
  ['Redis sessions (real server)', { REDIS_URL: TEST_REDIS_URL }],
])('Auth API: sessions, refresh rotation and revocation (%s)', (_name, env) => {
  const t = useAuthTestService(env);
  let p: string;
  beforeEach(async () => {
    p = await t.enabledProject();
  });

  async function signUp(email = 'ada@example.com'): Promise<CallResult> {
    const r = await t.call({ method: 'post', path: '/auth/signup', project: p, body: { email, password: PASSWORD } });
    expect(r.status).toBe(201);
    return r;
  }
  const refresh = (token: string) => t.call({ method: 'post', path: '/auth/refresh', project: p, body: { refresh_token: token } });
  const me = (token: string) => t.call({ method: 'get', path: '/auth/user', project: p, userToken: token });
  function sidOf(accessToken: string): { sid: string; iat: number } {
    const c = jwt.decode(accessToken) as { sid: string; iat: number };
    return { sid: c.sid, iat: c.iat };
  }

  it('the access token carries the documented claims', async () => {
    const s = await signUp();
    const decoded = jwt.decode(s.body.access_token, { complete: true });
    expect(decoded?.header).toEqual({ alg: 'ES256', typ: 'JWT', kid: expect.any(String) });
    expect(decoded?.payload).toEqual({
      iss: 'plinth',
      aud: p,
      sub: s.body.user.id,
      sid: expect.stringMatching(/^ses_/),
      iat: Math.floor(t.now / 1000),
      exp: Math.floor(t.now / 1000) + 900,
      email: 'ada@example.com',
      email_verified: false,
      aal: 1,
    });
  });

  it('refresh rotates: a new refresh token and access token, the same session', async () => {
    const s = await signUp();
    t.advance(60_000);
    const r = await refresh(s.body.refresh_token);
    expect(r.status).toBe(200);
    expect(r.body.refresh_token).toMatch(/^frt_/);
    expect(r.body.refresh_token).not.toBe(s.body.refresh_token);
    expect(r.body.user).toEqual(s.body.user);
    expect(sidOf(r.body.access_token).sid).toBe(sidOf(s.body.access_token).sid);
    expect((await me(r.body.access_token)).status).toBe(200);
    const again = await refresh(r.body.refresh_token);
    expect(again.status).toBe(200);
  });

  it('reusing the previous refresh token within 10 s returns the current one', async () => {
    const s = await signUp();
    const first = await refresh(s.body.refresh_token);
    t.advance(10_000);
    const twin = await refresh(s.body.refresh_token);
    expect(twin.status).toBe(200);
    expect(twin.body.refresh_token).toBe(first.body.refresh_token);
    expect((await refresh(first.body.refresh_token)).status).toBe(200);
  });

  it('reusing the previous refresh token after 10 s revokes the whole family', async () => {
    const s = await signUp();
    const first = await refresh(s.body.refresh_token);
    t.advance(10_001);
    const late = await refresh(s.body.refresh_token);
    expect(late.status).toBe(401);
    expect(late.body.error).toBe('unauthorized');
    expect((await refresh(first.body.refresh_token)).status).toBe(401);
    expect((await me(first.body.access_token)).status).toBe(401);
    const { sid, iat } = sidOf(first.body.access_token);
    expect(await t.service.revocations.isRevoked(asProjectId(p), sid, iat)).toBe(true);
  });

  it('an unknown or malformed refresh token answers 401; a missing one 400', async () => {
    expect((await refresh('frt_not-a-real-token')).status).toBe(401);
    const missing = await t.call({ method: 'post', path: '/auth/refresh', project: p, body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.details.fields).toContainEqual({ field: 'refresh_token', message: expect.any(String) });
  });

  it('sign-out ends that session only', async () => {
    await signUp();
    const a = await t.call({ method: 'post', path: '/auth/signin', project: p, body: { email: 'ada@example.com', password: PASSWORD } });
    const b = await t.call({ method: 'post', path: '/auth/signin', project: p, body: { email: 'ada@example.com', password: PASSWORD } });
    const out = await t.call({ method: 'post', path: '/auth/signout', project: p, body: { refresh_token: a.body.refresh_token } });
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ signed_out: true });
    expect((await me(a.body.access_token)).status).toBe(401);
    expect((await refresh(a.body.refresh_token)).status).toBe(401);
    expect((await me(b.body.access_token)).status).toBe(200);
  });

  it('sign-out with an unknown or spent refresh token still answers {signed_out:true}; without one 400', async () => {
    const unknown = await t.call({ method: 'post', path: '/auth/signout', project: p, body: { refresh_token: 'frt_unknown' } });
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual({ signed_out: true });
    const missing = await t.call({ method: 'post', path: '/auth/signout', project: p, body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.details.field).toBe('refresh_token');
  });

  it('sign-out-all ends every session of the user, and an existing access token fails at once', async () => {
    const s = await signUp();
    const other = await t.call({ method: 'post', path: '/auth/signin', project: p, body: { email: 'ada@example.com', password: PASSWORD } });
    const r = await t.call({ method: 'post', path: '/auth/signout-all', project: p, userToken: s.body.access_token });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ signed_out: true, everywhere: true });
    expect((await me(s.body.access_token)).status).toBe(401);
    expect((await me(other.body.access_token)).status).toBe(401);
    expect((await refresh(other.body.refresh_token)).status).toBe(401);
    const { sid, iat } = sidOf(other.body.access_token);
    expect(await t.service.revocations.isRevoked(asProjectId(p), sid, iat)).toBe(true);
  });

  it('disabling a user revokes their sessions; re-enabling lets them sign in again', async () => {
    const s = await signUp();
    const id = s.body.user.id as string;
    const off = await t.call({ method: 'patch', path: `/auth/users/${id}`, key: 'secret', project: p, body: { status: 'disabled' } });
    expect(off.status).toBe(200);
    expect(off.body.user.status).toBe('disabled');
    expect((await me(s.body.access_token)).status).toBe(401);
    expect((await refresh(s.body.refresh_token)).status).toBe(401);
    const on = await t.call({ method: 'patch', path: `/auth/users/${id}`, key: 'secret', project: p, body: { status: 'active' } });
    expect(on.body.user.status).toBe('active');
    const back = await t.call({ method: 'post', path: '/auth/signin', project: p, body: { email: 'ada@example.com', password: PASSWORD } });
    expect(back.status).toBe(200);
  });

  it('admin revoke-sessions signs the user out everywhere', async () => {
    const s = await signUp();
    const r = await t.call({ method: 'post', path: `/auth/users/${s.body.user.id}/revoke-sessions`, key: 'secret', project: p });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ revoked: true });
    expect((await me(s.body.access_token)).status).toBe(401);
  });

  it('deleting a user invalidates their tokens', async () => {
    const s = await signUp();
    const r = await t.call({ method: 'delete', path: `/auth/users/${s.body.user.id}`, key: 'secret', project: p });
    expect(r.body).toEqual({ deleted: true });
    expect((await me(s.body.access_token)).status).toBe(401);
    expect((await refresh(s.body.refresh_token)).status).toBe(401);
  });

  it('user-token endpoints refuse a missing, garbage, expired or foreign token with 401', async () => {
    const s = await signUp();
    expect((await t.call({ method: 'get', path: '/auth/user', project: p })).status).toBe(401);
    expect((await me('not.a.jwt')).status).toBe(401);
    const other = await t.enabledProject();
    expect((await t.call({ method: 'get', path: '/auth/user', project: other, userToken: s.body.access_token })).status).toBe(401);
    t.advance(901_000);
    expect((await me(s.body.access_token)).status).toBe(401);
    expect((await t.call({ method: 'post', path: '/auth/signout-all', project: p, userToken: s.body.access_token })).status).toBe(401);
  });

  it('access and refresh lifetimes follow the project settings', async () => {
    await t.configure(p, { access_token_ttl: 60, refresh_token_ttl: 3600 });
    const s = await signUp();
    expect(s.body.expires_in).toBe(60);
    t.advance(3_600_001);
    expect((await refresh(s.body.refresh_token)).status).toBe(401);
  });

  it('a minted token (no session) is not a session for /user', async () => {
    const m = await t.call({ method: 'post', path: '/auth/tokens', key: 'secret', project: p, body: { user_id: 'ext-1' } });
    expect((await me(m.body.access_token)).status).toBe(401);
  });

  itLeakedNoSecrets(t);
});
