import { useAuthTestService } from './auth-test-service';
import { itLeakedNoSecrets } from './no-secrets';

const PASSWORD = 'correct horse battery';

describe('Auth API: sign-up and sign-in', () => {
  const t = useAuthTestService();
  let p: string;
  beforeEach(async () => {
    p = await t.enabledProject();
  });

  it('sign-up answers 201 with a session and a fresh, unverified user', async () => {
    const r = await t.call({ method: 'post', path: '/auth/signup', project: p, body: { email: 'Ada@Example.com', password: PASSWORD, display_name: 'Ada' } });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      user: {
        id: expect.stringMatching(/^usr_/),
        email: 'ada@example.com',
        email_verified: false,
        display_name: 'Ada',
        photo_url: null,
        status: 'active',
        has_password: true,
        is_anonymous: false,
        claims: {},
        metadata: {},
        last_sign_in_at: expect.any(String),
        created_at: expect.any(String),
      },
      access_token: expect.any(String),
      expires_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      expires_in: 900,
      refresh_token: expect.stringMatching(/^frt_[A-Za-z0-9_-]{43}$/),
    });
    expect(Date.parse(r.body.expires_at) - t.now).toBeGreaterThan(899_000);
    const me = await t.call({ method: 'get', path: '/auth/user', project: p, userToken: r.body.access_token });
    expect(me.status).toBe(200);
    expect(me.body).toEqual({ user: r.body.user });
  });

  it('sign-up with a taken e-mail (any case) answers 409 conflict', async () => {
    await t.call({ method: 'post', path: '/auth/signup', project: p, body: { email: 'bob@example.com', password: PASSWORD } });
    const r = await t.call({ method: 'post', path: '/auth/signup', project: p, body: { email: 'BOB@example.com', password: 'another password' } });
    expect(r.status).toBe(409);
    expect(r.body.error).toBe('conflict');
  });

  it.each([
    [{ password: PASSWORD }, 'email'],
    [{ email: 'not-an-email', password: PASSWORD }, 'email'],
    [{ email: 'c@example.com' }, 'password'],
    [{ email: 'c@example.com', password: 'short' }, 'password'],
    [{ email: 'c@example.com', password: 'é'.repeat(37) }, 'password'],
    [{ email: 'c@example.com', password: 12345678 }, 'password'],
  ])('sign-up with %j answers 400 naming %s and creates nothing', async (body, field) => {
    const r = await t.call({ method: 'post', path: '/auth/signup', project: p, body });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('invalid_request');
    expect(r.body.details.fields).toContainEqual({ field, message: expect.any(String) });
    const list = await t.call({ method: 'get', path: '/auth/users', key: 'secret', project: p });
    expect(list.body.total).toBe(0);
  });

  it('a 72-byte password is accepted', async () => {
    const r = await t.call({ method: 'post', path: '/auth/signup', project: p, body: { email: 'long@example.com', password: 'x'.repeat(72) } });
    expect(r.status).toBe(201);
  });

  it('sign-in answers a session and records last_sign_in_at', async () => {
    await t.call({ method: 'post', path: '/auth/signup', project: p, body: { email: 'dan@example.com', password: PASSWORD } });
    t.advance(5000);
    const r = await t.call({ method: 'post', path: '/auth/signin', project: p, body: { email: 'DAN@example.com', password: PASSWORD } });
    expect(r.status).toBe(200);
    expect(r.body.user.email).toBe('dan@example.com');
    expect(r.body.user.last_sign_in_at).toBe(new Date(t.now).toISOString());
    expect(r.body.refresh_token).toMatch(/^frt_/);
  });

  it('wrong password, unknown e-mail and disabled account get the identical 401', async () => {
    const up = await t.call({ method: 'post', path: '/auth/signup', project: p, body: { email: 'eve@example.com', password: PASSWORD } });
    await t.call({ method: 'post', path: '/auth/signup', project: p, body: { email: 'off@example.com', password: PASSWORD } });
    const off = await t.call({ method: 'get', path: '/auth/users?search=off@', key: 'secret', project: p });
    await t.call({ method: 'patch', path: `/auth/users/${off.body.users[0].id}`, key: 'secret', project: p, body: { status: 'disabled' } });

    const wrong = await t.call({ method: 'post', path: '/auth/signin', project: p, body: { email: 'eve@example.com', password: 'wrong password' } });
    const unknown = await t.call({ method: 'post', path: '/auth/signin', project: p, body: { email: 'nobody@example.com', password: PASSWORD } });
    const disabled = await t.call({ method: 'post', path: '/auth/signin', project: p, body: { email: 'off@example.com', password: PASSWORD } });
    for (const r of [wrong, unknown, disabled]) {
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ error: 'unauthorized', message: wrong.body.message });
    }
    expect(up.status).toBe(201);
  });

  it('a password-less (OTP) user cannot sign in with any password', async () => {
    await t.call({ method: 'post', path: '/auth/users', key: 'secret', project: p, body: { email: 'nopw@example.com' } });
    const r = await t.call({ method: 'post', path: '/auth/signin', project: p, body: { email: 'nopw@example.com', password: PASSWORD } });
    expect(r.status).toBe(401);
  });

  it('users of one project do not exist in another', async () => {
    const other = await t.enabledProject();
    await t.call({ method: 'post', path: '/auth/signup', project: p, body: { email: 'fay@example.com', password: PASSWORD } });
    const r = await t.call({ method: 'post', path: '/auth/signin', project: other, body: { email: 'fay@example.com', password: PASSWORD } });
    expect(r.status).toBe(401);
    const up = await t.call({ method: 'post', path: '/auth/signup', project: other, body: { email: 'fay@example.com', password: PASSWORD } });
    expect(up.status).toBe(201);
  });

  it('sign-up sends a verification mail when the project asks for it, and none otherwise', async () => {
    await t.call({ method: 'post', path: '/auth/signup', project: p, body: { email: 'gus@example.com', password: PASSWORD } });
    const job = await t.lastMail(p, 'gus@example.com', 'verify');
    expect(job).toEqual({
      id: expect.stringMatching(/^mail_/),
      project: p,
      kind: 'verify',
      to: 'gus@example.com',
      data: { token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) },
      created_at: expect.any(String),
    });
    const quiet = await t.enabledProject({ send_verification_on_signup: false });
    await t.call({ method: 'post', path: '/auth/signup', project: quiet, body: { email: 'gus@example.com', password: PASSWORD } });
    expect(await t.mails(quiet)).toEqual([]);
  });

  itLeakedNoSecrets(t);
});
