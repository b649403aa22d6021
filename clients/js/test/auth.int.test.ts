import { PlinthError, ConflictError, memoryStorage, type AuthEvent, type SessionStorage } from '../src';
import { startSdkFixture, type SdkFixture } from './fixture';
import { startProxy } from './proxy';

const PASSWORD = 'sdk auth password';

/** Auth through the SDK against a real standalone Plinth: every call, errors included. */
describe('@plinth/client auth', () => {
  let f: SdkFixture;
  const client = (opts: Parameters<SdkFixture['client']>[0] = {}) => f.client(opts);
  const rawRefresh = (refresh_token: string) =>
    fetch(`${f.url}/v1/projects/${f.project}/auth/refresh`, {
      method: 'POST',
      headers: { authorization: `Bearer ${f.pk}`, 'content-type': 'application/json' },
      body: JSON.stringify({ refresh_token }),
    });

  beforeAll(async () => {
    f = await startSdkFixture({ access_token_ttl: 60, send_verification_on_signup: false });
    await f.admin.collections.create({
      name: 'mine',
      fields: { owner: { type: 'text', required: true } },
      rules: { read: 'record.owner == auth.uid', create: 'data.owner == auth.uid' },
    });
  });
  afterAll(async () => {
    await f.close();
  });

  it('sign-up stores the session and tells listeners; a taken e-mail is a ConflictError', async () => {
    const c = client();
    const events: AuthEvent[] = [];
    c.auth.onChange((e) => events.push(e));
    const s = await c.auth.signUp({ email: 'up@example.com', password: PASSWORD, displayName: 'Up' });
    expect(s).toMatchObject({ user: { email: 'up@example.com', display_name: 'Up', email_verified: false }, refresh_token: expect.stringMatching(/^frt_/), expires_in: 60 });
    expect(events).toEqual(['signed_in']);
    expect(c.auth.currentUser?.id).toBe(s.user.id);
    expect((await c.auth.session())?.refresh_token).toBe(s.refresh_token);
    await expect(client().auth.signUp({ email: 'up@example.com', password: PASSWORD })).rejects.toBeInstanceOf(ConflictError);
  });

  it('sign-in: a wrong password is a 401 PlinthError and stores nothing; the right one signs in', async () => {
    const c = client();
    const wrong = await c.auth.signIn('up@example.com', 'not the password').catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(PlinthError);
    expect(wrong).toMatchObject({ status: 401, code: 'unauthorized', requestId: expect.any(String) });
    expect(await c.auth.session()).toBeNull();
    const s = await c.auth.signIn('up@example.com', PASSWORD);
    expect((await c.auth.user())?.id).toBe(s.user.id);
  });

  it('the access token goes in X-Auth-User-Token for Auth and X-Db-User-Token for records', async () => {
    const proxy = await startProxy(f.url);
    const c = client({ url: proxy.url });
    try {
      const s = await c.auth.signIn('up@example.com', PASSWORD);
      await c.auth.user();
      await c.collection('mine').create({ owner: s.user.id });
      expect(proxy.log.map((x) => [x.method, x.path.replace(/.*\/v1\/projects\/[^/]+/, ''), x.status])).toEqual([
        ['POST', '/auth/signin', 200],
        ['GET', '/auth/user', 200],
        ['POST', '/collections/mine/records', 201],
      ]);
      const [signin, user, create] = proxy.log;
      expect(signin!.requestHeaders['x-auth-user-token']).toBeUndefined();
      expect(user!.requestHeaders['x-auth-user-token']).toBe(s.access_token);
      expect(user!.requestHeaders['x-db-user-token']).toBeUndefined();
      expect(create!.requestHeaders['x-db-user-token']).toBe(s.access_token);
      expect(create!.requestHeaders['x-auth-user-token']).toBeUndefined();
      expect(create!.requestHeaders['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
      expect(create!.requestHeaders.authorization).toBe(`Bearer ${f.pk}`);
      expect((await c.collection('mine').list()).records).toHaveLength(1);
    } finally {
      await proxy.close();
    }
  });

  it('refresh rotates the refresh token and stores the new session', async () => {
    const c = client();
    const events: AuthEvent[] = [];
    const s1 = await c.auth.signIn('up@example.com', PASSWORD);
    c.auth.onChange((e) => events.push(e));
    const s2 = await c.auth.refresh();
    expect(s2?.refresh_token).toMatch(/^frt_/);
    expect(s2?.refresh_token).not.toBe(s1.refresh_token);
    expect((await c.auth.session())?.refresh_token).toBe(s2?.refresh_token);
    expect(events).toEqual(['refreshed']);
    expect((await c.auth.user())?.email).toBe('up@example.com');
  });

  it('refreshes on its own before expiry (refreshMargin), with no call from the app', async () => {
    const c = client({ refreshMargin: 58 }); // 60 s tokens: refresh once fewer than 58 s remain
    const s1 = await c.auth.signIn('up@example.com', PASSWORD);
    const refreshed = await new Promise<string | undefined>((resolve) => c.auth.onChange((e, s) => e === 'refreshed' && resolve(s?.refresh_token)));
    expect(refreshed).not.toBe(s1.refresh_token);
    expect((await c.auth.session())?.refresh_token).toBe(refreshed);
    expect((await rawRefresh(s1.refresh_token)).status).toBe(200); // the parent, inside the 10 s reuse window
  });

  it('a call that needs a token refreshes first when the token is about to expire', async () => {
    const proxy = await startProxy(f.url);
    const c = client({ url: proxy.url, refreshMargin: 59, autoRefresh: false });
    try {
      await c.auth.signIn('up@example.com', PASSWORD);
      await c.auth.user(); // 60 s left: no refresh yet
      await new Promise((r) => setTimeout(r, 1200)); // now fewer than 59 s remain
      await c.auth.user();
      expect(proxy.log.map((x) => x.path.replace(/.*\/auth/, ''))).toEqual(['/signin', '/user', '/refresh', '/user']);
    } finally {
      await proxy.close();
    }
  });

  it('one-time code: request, then redeem the mailed code into a session (e-mail verified)', async () => {
    const c = client();
    await c.auth.signUp({ email: 'otp@example.com', password: PASSWORD });
    await c.auth.signOut();
    await c.auth.requestOtp('otp@example.com');
    const { code } = await f.mail('otp@example.com', 'otp');
    await expect(c.auth.redeemOtp('otp@example.com', '000000' === code ? '111111' : '000000')).rejects.toMatchObject({ status: 401 });
    const s = await c.auth.redeemOtp('otp@example.com', code!);
    expect(s.user).toMatchObject({ email: 'otp@example.com', email_verified: true });
    expect(c.auth.currentUser?.email).toBe('otp@example.com');
  });

  it('verification: request a mail as the signed-in user, then confirm its token', async () => {
    const c = client();
    await c.auth.signUp({ email: 'verify@example.com', password: PASSWORD });
    await c.auth.requestVerification();
    const { token } = await f.mail('verify@example.com', 'verify');
    const user = await c.auth.confirmVerification(token!);
    expect(user.email_verified).toBe(true);
    await expect(c.auth.confirmVerification(token!)).rejects.toMatchObject({ status: 400, code: 'invalid_request' });
  });

  it('password reset: request, reset with the mailed token; every session of the user ends', async () => {
    const c = client();
    await c.auth.signUp({ email: 'reset@example.com', password: PASSWORD });
    await c.auth.requestPasswordReset('reset@example.com');
    await c.auth.requestPasswordReset('nobody@example.com'); // answers the same
    const { token } = await f.mail('reset@example.com', 'reset');
    await c.auth.resetPassword(token!, 'a brand new password');
    await expect(c.auth.user()).rejects.toMatchObject({ status: 401 });
    expect(await c.auth.refresh()).toBeNull(); // the session ended on the server, so the client forgets it
    expect(await c.auth.session()).toBeNull();
    await c.auth.signIn('reset@example.com', 'a brand new password');
  });

  it('sign-out ends the session on the server and here', async () => {
    const c = client();
    const events: AuthEvent[] = [];
    const s = await c.auth.signIn('up@example.com', PASSWORD);
    c.auth.onChange((e) => events.push(e));
    await c.auth.signOut();
    expect(events).toEqual(['signed_out']);
    expect(await c.auth.session()).toBeNull();
    expect(c.auth.currentUser).toBeNull();
    expect(await c.auth.user()).toBeNull();
    expect((await rawRefresh(s.refresh_token)).status).toBe(401);
  });

  it('sign-out-all ends the sessions of every device', async () => {
    const phone = client();
    const laptop = client();
    await phone.auth.signIn('up@example.com', PASSWORD);
    const other = await laptop.auth.signIn('up@example.com', PASSWORD);
    await phone.auth.signOutAll();
    expect(await phone.auth.session()).toBeNull();
    expect((await rawRefresh(other.refresh_token)).status).toBe(401);
    await expect(laptop.auth.user()).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
  });

  it('pluggable storage: two clients on one storage share the session (an async storage works too)', async () => {
    const store = memoryStorage();
    const slow: SessionStorage = {
      getItem: async (k) => store.getItem(k),
      setItem: async (k, v) => store.setItem(k, v),
      removeItem: async (k) => store.removeItem(k),
    };
    const a = client({ storage: slow, multiTab: false });
    const b = client({ storage: slow, multiTab: false });
    const s = await a.auth.signIn('up@example.com', PASSWORD);
    expect((await b.auth.user())?.id).toBe(s.user.id);
    const s2 = await b.auth.refresh();
    expect((await a.auth.session())?.refresh_token).toBe(s2?.refresh_token);
    await a.auth.signOut();
    expect(await b.auth.session()).toBeNull();
  });

  it('every auth call takes an AbortSignal', async () => {
    const c = client();
    const ac = new AbortController();
    ac.abort();
    await expect(c.auth.signIn('up@example.com', PASSWORD, { signal: ac.signal })).rejects.toMatchObject({ name: 'AbortError' });
    await expect(c.auth.requestOtp('up@example.com', { signal: ac.signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(await c.auth.session()).toBeNull();
  });

  it('a project without Auth enabled answers 404 not_found', async () => {
    const p = await f.t.createProject();
    const c = client({ project: p.id, key: p.publicKey });
    await expect(c.auth.signIn('up@example.com', PASSWORD)).rejects.toMatchObject({ status: 404, code: 'not_found' });
  });
});
