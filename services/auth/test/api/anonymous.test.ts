import { useAuthTestService } from './auth-test-service';
import { itLeakedNoSecrets } from './no-secrets';

const PASSWORD = 'anonymous upgrade password';
const DAY = 86_400_000;

/** Anonymous users: sign-in without an address, the upgrade that keeps the uid, the flood limit, the idle removal. */
describe('Auth API: anonymous users', () => {
  const t = useAuthTestService({ PLINTH_RATE_LIMIT_IP: '4', PLINTH_ANONYMOUS_MAX_IDLE_DAYS: '30' });
  let p: string;
  beforeEach(async () => {
    p = await t.enabledProject({ allow_anonymous: true, send_verification_on_signup: false });
  });

  const anonymous = (ip: string, project = p) => t.call({ method: 'post', path: '/auth/anonymous', project, ip, body: {} });
  const me = (token: string) => t.call({ method: 'get', path: '/auth/user', project: p, userToken: token });
  const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { [k: string]: unknown };

  it('off by default: 403 forbidden naming the setting, and no user created', async () => {
    const q = await t.enabledProject();
    const r = await anonymous('198.51.100.1', q);
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ error: 'forbidden', message: expect.stringContaining('allow_anonymous') });
    const users = await t.call({ method: 'get', path: '/auth/users', project: q, key: 'secret' });
    expect(users.body.total).toBe(0);
  });

  it('answers 201 with a session of a user with no address; the token says anonymous; the admin API shows it as anonymous', async () => {
    const r = await anonymous('198.51.100.2');
    expect(r.status).toBe(201);
    expect(r.body.user).toMatchObject({ email: null, email_verified: false, has_password: false, is_anonymous: true, status: 'active' });
    expect(r.body.refresh_token).toMatch(/^frt_/);
    expect(claimsOf(r.body.access_token)).toMatchObject({ sub: r.body.user.id, anonymous: true });
    expect(claimsOf(r.body.access_token)).not.toHaveProperty('email');
    expect((await me(r.body.access_token)).body.user.id).toBe(r.body.user.id);
    const listed = await t.call({ method: 'get', path: '/auth/users', project: p, key: 'secret' });
    expect(listed.body.users).toEqual([expect.objectContaining({ id: r.body.user.id, email: null, is_anonymous: true })]);
    // A second one is another user: many users may have no address.
    const other = await anonymous('198.51.100.2');
    expect(other.status).toBe(201);
    expect(other.body.user.id).not.toBe(r.body.user.id);
    await t.call({ method: 'post', path: '/auth/signup', project: p, body: { email: 'named.one@example.com', password: PASSWORD } });
    const only = async (anonymous: boolean) =>
      (await t.call({ method: 'get', path: `/auth/users?anonymous=${anonymous}`, project: p, key: 'secret' })).body.users.map((u: { email: string | null }) => u.email);
    expect(await only(true)).toEqual([null, null]);
    expect(await only(false)).toEqual(['named.one@example.com']);
  });

  it('a flood from one address → 429 with Retry-After; another address still signs in', async () => {
    for (let i = 0; i < 4; i++) expect((await anonymous('198.51.100.3')).status).toBe(201);
    const r = await anonymous('198.51.100.3');
    expect(r.status).toBe(429);
    expect(r.body.error).toBe('rate_limited');
    expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
    expect((await anonymous('198.51.100.4')).status).toBe(201);
    const listed = await t.call({ method: 'get', path: '/auth/users', project: p, key: 'secret' });
    expect(listed.body.total).toBe(5);
  });

  it('the upgrade adds an address and a password and keeps the uid; the anonymous token stops working; sign-in works', async () => {
    const s = (await anonymous('198.51.100.5')).body;
    const up = await t.call({ method: 'post', path: '/auth/anonymous/upgrade', project: p, userToken: s.access_token, body: { email: 'Guest@Example.com', password: PASSWORD } });
    expect(up.status).toBe(200);
    expect(up.body.user).toMatchObject({ id: s.user.id, email: 'guest@example.com', is_anonymous: false, has_password: true, email_verified: false });
    expect(claimsOf(up.body.access_token)).not.toHaveProperty('anonymous');
    expect((await me(s.access_token)).status).toBe(401);
    expect((await t.call({ method: 'post', path: '/auth/refresh', project: p, body: { refresh_token: s.refresh_token } })).status).toBe(401);
    const signedIn = await t.call({ method: 'post', path: '/auth/signin', project: p, body: { email: 'guest@example.com', password: PASSWORD } });
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.user.id).toBe(s.user.id);
  });

  it('the upgrade to a taken address → 409 and the user stays anonymous; a second upgrade → 400', async () => {
    await t.call({ method: 'post', path: '/auth/signup', project: p, body: { email: 'taken@example.com', password: PASSWORD } });
    const s = (await anonymous('198.51.100.6')).body;
    const taken = await t.call({ method: 'post', path: '/auth/anonymous/upgrade', project: p, userToken: s.access_token, body: { email: 'TAKEN@example.com', password: PASSWORD } });
    expect(taken.status).toBe(409);
    expect(taken.body.details).toMatchObject({ field: 'email' });
    expect((await me(s.access_token)).body.user).toMatchObject({ email: null, is_anonymous: true });
    const up = await t.call({ method: 'post', path: '/auth/anonymous/upgrade', project: p, userToken: s.access_token, body: { email: 'free@example.com', password: PASSWORD } });
    const again = await t.call({ method: 'post', path: '/auth/anonymous/upgrade', project: p, userToken: up.body.access_token, body: { email: 'again@example.com', password: PASSWORD } });
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_request');
  });

  it('the upgrade needs the anonymous access token; without one → 401', async () => {
    const r = await t.call({ method: 'post', path: '/auth/anonymous/upgrade', project: p, body: { email: 'nobody@example.com', password: PASSWORD } });
    expect(r.status).toBe(401);
  });

  it('past the reauthentication window the access token alone cannot upgrade (403); the session refresh token proves it', async () => {
    const q = await t.enabledProject({ allow_anonymous: true, send_verification_on_signup: false, reauthentication_window: 60 });
    const s = (await anonymous('198.51.100.7', q)).body;
    t.advance(61_000);
    const call = (body: object) => t.call({ method: 'post', path: '/auth/anonymous/upgrade', project: q, userToken: s.access_token, body });
    const alone = await call({ email: 'late@example.com', password: PASSWORD });
    expect(alone.status).toBe(403);
    expect(alone.body.error).toBe('reauthentication_required');
    const other = (await anonymous('198.51.100.7', q)).body;
    expect((await call({ email: 'late@example.com', password: PASSWORD, refresh_token: other.refresh_token })).status).toBe(403);
    const proved = await call({ email: 'late@example.com', password: PASSWORD, refresh_token: s.refresh_token });
    expect(proved.status).toBe(200);
    expect(proved.body.user).toMatchObject({ id: s.user.id, email: 'late@example.com', is_anonymous: false });
  });

  it('an anonymous user cannot set a password alone or change an address it does not have: 400 naming the upgrade', async () => {
    const s = (await anonymous('198.51.100.8')).body;
    for (const [path, body] of [['/auth/password/change', { new_password: PASSWORD }], ['/auth/email/change', { new_email: 'x@example.com' }]] as const) {
      const r = await t.call({ method: 'post', path, project: p, userToken: s.access_token, body });
      expect(r.status).toBe(400);
      expect(r.body.message).toContain('/auth/anonymous/upgrade');
    }
    expect((await t.call({ method: 'post', path: '/auth/verify/request', project: p, userToken: s.access_token, body: {} })).status).toBe(400);
  });

  it('anonymous users idle past PLINTH_ANONYMOUS_MAX_IDLE_DAYS are removed at a later sign-in; refreshed ones and upgraded ones stay', async () => {
    const idle = (await anonymous('198.51.100.9')).body;
    const kept = (await anonymous('198.51.100.9')).body;
    const upgraded = (await anonymous('198.51.100.9')).body;
    await t.call({ method: 'post', path: '/auth/anonymous/upgrade', project: p, userToken: upgraded.access_token, body: { email: 'kept@example.com', password: PASSWORD } });
    t.advance(20 * DAY);
    expect((await t.call({ method: 'post', path: '/auth/refresh', project: p, body: { refresh_token: kept.refresh_token } })).status).toBe(200);
    t.advance(11 * DAY);
    // A sign-in starts the removal (at most once an hour); it runs in the background.
    expect((await anonymous('198.51.100.10')).status).toBe(201);
    const get = (id: string) => t.call({ method: 'get', path: `/auth/users/${id}`, project: p, key: 'secret' });
    for (let i = 0; i < 50 && (await get(idle.user.id)).status !== 404; i++) await new Promise((r) => setTimeout(r, 20));
    expect((await get(idle.user.id)).status).toBe(404);
    expect((await get(kept.user.id)).status).toBe(200);
    expect((await get(upgraded.user.id)).status).toBe(200);
  });

  it('an anonymous user deletes itself with a recent sign-in, or later with its refresh token; a password proof is refused (400)', async () => {
    const q = await t.enabledProject({ allow_anonymous: true, reauthentication_window: 60 });
    const del = (token: string, body?: object) => t.call({ method: 'delete', path: '/auth/user', project: q, userToken: token, body });
    const get = (id: string) => t.call({ method: 'get', path: `/auth/users/${id}`, project: q, key: 'secret' });
    const fresh = (await anonymous('198.51.100.11', q)).body;
    expect((await del(fresh.access_token, { password: PASSWORD })).status).toBe(400);
    expect((await del(fresh.access_token)).body).toEqual({ deleted: true });
    expect((await get(fresh.user.id)).status).toBe(404);

    const old = (await anonymous('198.51.100.11', q)).body;
    t.advance(61_000);
    expect((await del(old.access_token)).body.error).toBe('reauthentication_required');
    expect((await get(old.user.id)).status).toBe(200);
    expect((await del(old.access_token, { refresh_token: old.refresh_token })).body).toEqual({ deleted: true });
    expect((await get(old.user.id)).status).toBe(404);
    expect((await me(old.access_token)).status).toBe(401);
  });

  it('no other way makes a token say anonymous: the claim name is reserved for user claims and minted tokens (400)', async () => {
    const u = await t.call({ method: 'post', path: '/auth/signup', project: p, body: { email: 'named@example.com', password: PASSWORD } });
    const patched = await t.call({ method: 'patch', path: `/auth/users/${u.body.user.id}`, project: p, key: 'secret', body: { claims: { anonymous: true } } });
    expect(patched.status).toBe(400);
    expect(JSON.stringify(patched.body)).toContain('anonymous');
    const minted = await t.call({ method: 'post', path: '/auth/tokens', project: p, key: 'secret', body: { user_id: 'ext-1', claims: { anonymous: true } } });
    expect(minted.status).toBe(400);
  });

  itLeakedNoSecrets(t);
});
