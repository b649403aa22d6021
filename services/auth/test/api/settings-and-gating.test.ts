import { useAuthTestService, type Call } from './auth-test-service';
import { itLeakedNoSecrets } from './no-secrets';

const PASSWORD = 'gating suite password';

/** Every Auth endpoint that answers 404 while Auth is disabled, with a plausible body. */
const AUTH_ENDPOINTS: Array<Omit<Call, 'project'>> = [
  { method: 'post', path: '/auth/signup', body: { email: 'a@example.com', password: PASSWORD } },
  { method: 'post', path: '/auth/signin', body: { email: 'a@example.com', password: PASSWORD } },
  { method: 'post', path: '/auth/otp/request', body: { email: 'a@example.com' } },
  { method: 'post', path: '/auth/otp/redeem', body: { email: 'a@example.com', code: '123456' } },
  { method: 'post', path: '/auth/refresh', body: { refresh_token: 'frt_x' } },
  { method: 'get', path: '/auth/oauth/google/start?redirect_to=https%3A%2F%2Fapp.example%2F', key: 'none' },
  { method: 'get', path: '/auth/oauth/callback?state=s&code=c', key: 'none' },
  { method: 'post', path: '/auth/oauth/exchange', body: { code: 'x'.repeat(43) } },
  { method: 'post', path: '/auth/signout', body: { refresh_token: 'frt_x' } },
  { method: 'post', path: '/auth/signout-all', userToken: 'x' },
  { method: 'get', path: '/auth/user', userToken: 'x' },
  { method: 'post', path: '/auth/verify/request', userToken: 'x' },
  { method: 'post', path: '/auth/verify/confirm', body: { token: 'x' } },
  { method: 'post', path: '/auth/reauthenticate', userToken: 'x', body: { password: PASSWORD } },
  { method: 'post', path: '/auth/email/cancel', body: { token: 'x' } },
  { method: 'post', path: '/auth/password/forgot', body: { email: 'a@example.com' } },
  { method: 'post', path: '/auth/password/reset', body: { token: 'x', password: PASSWORD } },
  { method: 'post', path: '/auth/anonymous' },
  { method: 'post', path: '/auth/anonymous/upgrade', userToken: 'x', body: { email: 'a@example.com', password: PASSWORD } },
  { method: 'get', path: '/auth/users', key: 'secret' },
  { method: 'post', path: '/auth/users', key: 'secret', body: { email: 'a@example.com' } },
  { method: 'get', path: '/auth/users/usr_x', key: 'secret' },
  { method: 'patch', path: '/auth/users/usr_x', key: 'secret', body: { status: 'disabled' } },
  { method: 'delete', path: '/auth/users/usr_x', key: 'secret' },
  { method: 'post', path: '/auth/users/usr_x/revoke-sessions', key: 'secret' },
  { method: 'post', path: '/auth/users/usr_x/send-reset', key: 'secret' },
];

describe('Auth API: settings, and Auth disabled by default', () => {
  const t = useAuthTestService();

  it('a new project has Auth disabled and the documented defaults', async () => {
    const r = await t.call({ method: 'get', path: '/settings/auth', key: 'secret', project: (await t.newProject()) });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      enabled: false,
      access_token_ttl: 900,
      refresh_token_ttl: 2_592_000,
      otp_creates_users: false,
      send_verification_on_signup: true,
      redirect_url: null,
      mail_from: null,
      reauthentication_window: 600,
      allow_anonymous: false,
      providers: {},
      redirect_urls: [],
    });
  });

  it.each(AUTH_ENDPOINTS.map((c) => [c.method.toUpperCase(), c.path, c] as const))(
    '%s %s answers 404 not_found while Auth is disabled',
    async (_m, _p, c) => {
      const p = await t.newProject();
      const r = await t.call({ ...c, project: p });
      expect(r.status).toBe(404);
      expect(r.body.error).toBe('not_found');
    },
  );

  it('nothing is created while disabled', async () => {
    const p = await t.newProject();
    await t.call({ method: 'post', path: '/auth/signup', project: p, body: { email: 'a@example.com', password: PASSWORD } });
    await t.configure(p);
    expect((await t.call({ method: 'get', path: '/auth/users', key: 'secret', project: p })).body.total).toBe(0);
  });

  it('PATCH merges settings and answers the full settings; disabling again brings back the 404', async () => {
    const p = await t.newProject();
    const r = await t.call({
      method: 'patch',
      path: '/settings/auth',
      key: 'secret',
      project: p,
      body: { enabled: true, access_token_ttl: 120, redirect_url: 'https://app.example/auth', mail_from: 'auth@app.example' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ enabled: true, access_token_ttl: 120, redirect_url: 'https://app.example/auth', mail_from: 'auth@app.example', otp_creates_users: false });
    const up = await t.call({ method: 'post', path: '/auth/signup', project: p, body: { email: 'a@example.com', password: PASSWORD } });
    expect(up.status).toBe(201);
    expect(up.body.expires_in).toBe(120);
    const off = await t.call({ method: 'patch', path: '/settings/auth', key: 'secret', project: p, body: { enabled: false } });
    expect(off.body).toMatchObject({ enabled: false, access_token_ttl: 120 });
    expect((await t.call({ method: 'get', path: '/auth/user', project: p, userToken: up.body.access_token })).status).toBe(404);
  });

  it.each([
    [{}, 'body'],
    [{ enabled: 'yes' }, 'enabled'],
    [{ access_token_ttl: 59 }, 'access_token_ttl'],
    [{ access_token_ttl: 86_401 }, 'access_token_ttl'],
    [{ refresh_token_ttl: 10 }, 'refresh_token_ttl'],
    [{ redirect_url: 'javascript:alert(1)' }, 'redirect_url'],
    [{ mail_from: 'nope' }, 'mail_from'],
    [{ reauthentication_window: 0 }, 'reauthentication_window'],
    [{ reauthentication_window: 86_401 }, 'reauthentication_window'],
    [{ colour: 'blue' }, 'colour'],
  ])('PATCH settings with %j answers 400 naming %s and changes nothing', async (body, field) => {
    const p = await t.newProject();
    const r = await t.call({ method: 'patch', path: '/settings/auth', key: 'secret', project: p, body });
    expect(r.status).toBe(400);
    expect(r.body.details.fields.map((f: { field: string }) => f.field)).toContain(field);
    expect((await t.call({ method: 'get', path: '/settings/auth', key: 'secret', project: p })).body.enabled).toBe(false);
  });

  it.each([['get'], ['patch']] as const)('%s settings with the public key answers 403', async (method) => {
    const r = await t.call({ method, path: '/settings/auth', key: 'public', project: (await t.newProject()), body: { enabled: true } });
    expect(r.status).toBe(403);
    expect(r.body.error).toBe('forbidden');
  });

  it('without a project key the gateway answers 401 on every Auth endpoint and on settings', async () => {
    const p = await t.enabledProject();
    // The provider sign-in's browser navigations (start, callback) take no key: their state and cookie guard them.
    const keyed = AUTH_ENDPOINTS.filter((c) => c.key !== 'none');
    for (const c of [...keyed, { method: 'get', path: '/settings/auth' } as const, { method: 'post', path: '/auth/tokens' } as const]) {
      const r = await t.call({ ...c, key: 'none', project: p });
      expect([c.path, r.status, r.body.error]).toEqual([c.path, 401, 'unauthorized']);
    }
  });

  it('the service itself refuses a keyless request that reached it (defence in depth)', async () => {
    const p = await t.enabledProject();
    for (const c of [AUTH_ENDPOINTS[0]!, { method: 'get', path: '/settings/auth' } as const, { method: 'post', path: '/auth/tokens' } as const]) {
      const r = await t.call({ ...c, key: 'none', project: p, direct: true });
      expect([c.path, r.status]).toEqual([c.path, 401]);
    }
  });

  it('the service answers its health and readiness probes (stores reachable)', async () => {
    const request = (await import('supertest')).default;
    expect((await request(t.service.app).get('/healthz')).body).toEqual({ status: 'ok', service: 'auth' });
    expect((await request(t.service.app).get('/readyz')).body).toEqual({ status: 'ready', service: 'auth' });
  });

  it('a request without the internal credential is refused with 401', async () => {
    const request = (await import('supertest')).default;
    const r = await request(t.service.app).get('/v1/projects/proj-main/auth/jwks.json');
    expect(r.status).toBe(401);
  });

  itLeakedNoSecrets(t);
});
