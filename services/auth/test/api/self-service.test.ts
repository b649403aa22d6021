import jwt from 'jsonwebtoken';
import { useAuthTestService } from './auth-test-service';
import { itLeakedNoSecrets } from './no-secrets';

const PASSWORD = 'self service password';
const NEW_PASSWORD = 'self service new password';

describe('Auth API: self-service with the access token', () => {
  const t = useAuthTestService();
  let p: string;
  let s: { access_token: string; refresh_token: string; user: { id: string } };
  beforeEach(async () => {
    p = await t.enabledProject({ send_verification_on_signup: false });
    s = (await t.call({ method: 'post', path: '/auth/signup', project: p, body: { email: 'ada@example.com', password: PASSWORD } })).body;
  });

  const call = (method: 'post' | 'patch' | 'delete' | 'get', path: string, body?: object, userToken = s.access_token) =>
    t.call({ method, path, project: p, body, userToken });
  const signIn = (email: string, password: string) => t.call({ method: 'post', path: '/auth/signin', project: p, body: { email, password } });

  describe('change password', () => {
    it('needs the current password; ends every session and answers a new one', async () => {
      const other = (await signIn('ada@example.com', PASSWORD)).body;
      const wrong = await call('post', '/auth/password/change', { current_password: 'not it at all', new_password: NEW_PASSWORD });
      expect(wrong.status).toBe(403);
      expect(wrong.body.error).toBe('forbidden');
      const r = await call('post', '/auth/password/change', { current_password: PASSWORD, new_password: NEW_PASSWORD });
      expect(r.status).toBe(200);
      expect(r.body.refresh_token).toMatch(/^frt_/);
      expect((await call('get', '/auth/user', undefined, other.access_token)).status).toBe(401);
      expect((await call('get', '/auth/user', undefined, s.access_token)).status).toBe(401);
      expect((await call('get', '/auth/user', undefined, r.body.access_token)).status).toBe(200);
      expect((await signIn('ada@example.com', PASSWORD)).status).toBe(401);
      expect((await signIn('ada@example.com', NEW_PASSWORD)).status).toBe(200);
    });

    it('ends outstanding reset links', async () => {
      await t.call({ method: 'post', path: '/auth/password/forgot', project: p, body: { email: 'ada@example.com' } });
      const token = ((await t.lastMail(p, 'ada@example.com', 'reset')).data as { token: string }).token;
      await call('post', '/auth/password/change', { current_password: PASSWORD, new_password: NEW_PASSWORD });
      const r = await t.call({ method: 'post', path: '/auth/password/reset', project: p, body: { token, password: 'attacker password' } });
      expect(r.status).toBe(400);
    });

    it('refuses a new password over 72 bytes with 400, without echoing it', async () => {
      const long = 'y'.repeat(73);
      const r = await call('post', '/auth/password/change', { current_password: PASSWORD, new_password: long });
      expect(r.status).toBe(400);
      expect(JSON.stringify(r.body)).not.toContain(long);
    });
  });

  describe('change e-mail', () => {
    it('mails a link to the new address and a notice to the old; the e-mail changes only on confirm', async () => {
      const r = await call('post', '/auth/email/change', { new_email: 'Ada.New@Example.com', password: PASSWORD });
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ sent: true });
      const notice = await t.lastMail(p, 'ada@example.com', 'email-changed');
      expect(notice.data).toEqual({ new_email: 'ada.new@example.com', token: expect.any(String) });
      const link = await t.lastMail(p, 'ada.new@example.com', 'email-change');
      expect((await call('get', '/auth/user')).body.user.email).toBe('ada@example.com');

      // Confirmed with the session that asked: the account keeps its password and sessions.
      const c = await t.call({ method: 'post', path: '/auth/email/confirm', project: p, body: { token: (link.data as { token: string }).token }, userToken: s.access_token });
      expect(c.status).toBe(200);
      expect(c.body).toEqual({ changed: true, user: expect.objectContaining({ email: 'ada.new@example.com', email_verified: true }) });
      expect((await signIn('ada.new@example.com', PASSWORD)).status).toBe(200);
      expect((await signIn('ada@example.com', PASSWORD)).status).toBe(401);
      const again = await t.call({ method: 'post', path: '/auth/email/confirm', project: p, body: { token: (link.data as { token: string }).token } });
      expect(again.status).toBe(400);
    });

    it('needs the password; a taken address → 409; one change mail per minute', async () => {
      await t.call({ method: 'post', path: '/auth/signup', project: p, body: { email: 'taken@example.com', password: PASSWORD } });
      expect((await call('post', '/auth/email/change', { new_email: 'new@example.com' })).status).toBe(403);
      expect((await call('post', '/auth/email/change', { new_email: 'taken@example.com', password: PASSWORD })).status).toBe(409);
      await call('post', '/auth/email/change', { new_email: 'new@example.com', password: PASSWORD });
      expect((await call('post', '/auth/email/change', { new_email: 'new@example.com', password: PASSWORD })).body).toEqual({ sent: true });
      expect((await t.mails(p, 'new@example.com')).length).toBe(1);
    });
  });

  it('PATCH /user changes the display name', async () => {
    const r = await call('patch', '/auth/user', { display_name: 'Ada L.' });
    expect(r.status).toBe(200);
    expect(r.body.user.display_name).toBe('Ada L.');
    expect((await call('patch', '/auth/user', {})).status).toBe(400);
    expect((await call('patch', '/auth/user', { email: 'x@example.com' })).status).toBe(400);
  });

  describe('delete own account', () => {
    it('with the current password: sessions end and the e-mail is free again', async () => {
      expect((await call('delete', '/auth/user', { password: 'wrong password!' })).status).toBe(403);
      const r = await call('delete', '/auth/user', { password: PASSWORD });
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ deleted: true });
      expect((await call('get', '/auth/user')).status).toBe(401);
      expect((await t.call({ method: 'post', path: '/auth/refresh', project: p, body: { refresh_token: s.refresh_token } })).status).toBe(401);
      expect((await t.call({ method: 'post', path: '/auth/signup', project: p, body: { email: 'ada@example.com', password: PASSWORD } })).status).toBe(201);
    });

    it('with a fresh sign-in code instead', async () => {
      await t.call({ method: 'post', path: '/auth/otp/request', project: p, body: { email: 'ada@example.com' } });
      const code = ((await t.lastMail(p, 'ada@example.com', 'otp')).data as { code: string }).code;
      expect((await call('delete', '/auth/user', { code: code === '000000' ? '000001' : '000000' })).status).toBe(403);
      expect((await call('delete', '/auth/user', { code })).status).toBe(200);
      expect((await t.call({ method: 'get', path: `/auth/users/${s.user.id}`, key: 'secret', project: p })).status).toBe(404);
    });

    it('needs a proof', async () => {
      expect((await call('delete', '/auth/user', {})).status).toBe(400);
    });
  });

  describe('custom claims set by the admin', () => {
    it('appear in the access token at the next refresh; reserved and unsafe names and oversize objects → 400', async () => {
      const patch = (claims: unknown) =>
        t.call({ method: 'patch', path: `/auth/users/${s.user.id}`, key: 'secret', project: p, body: { claims } });
      const set = await patch({ role: 'admin', teams: ['red'] });
      expect(set.status).toBe(200);
      expect(set.body.user.claims).toEqual({ role: 'admin', teams: ['red'] });
      expect(jwt.decode(s.access_token)).not.toHaveProperty('role');
      const refreshed = await t.call({ method: 'post', path: '/auth/refresh', project: p, body: { refresh_token: s.refresh_token } });
      expect(jwt.decode(refreshed.body.access_token)).toMatchObject({ sub: s.user.id, role: 'admin', teams: ['red'] });
      for (const bad of [{ sub: 'x' }, { email_verified: true }, JSON.parse('{"__proto__": {"x": 1}}'), { 'a-b': 1 }, { big: 'x'.repeat(1000) }, ['role']]) {
        const r = await patch(bad);
        expect(r.status).toBe(400);
        expect(r.body.details.field).toBe('claims');
      }
      expect((await patch({})).body.user.claims).toEqual({});
    });
  });

  describe('error clarity', () => {
    it('a user token in X-Db-User-Token on an Auth endpoint → 400 naming X-Auth-User-Token', async () => {
      for (const [method, path] of [['get', '/auth/user'], ['post', '/auth/signout-all'], ['post', '/auth/password/change']] as const) {
        const r = await t.call({ method, path, project: p, headers: { 'x-db-user-token': s.access_token }, body: {} });
        expect(r.status).toBe(400);
        expect(r.body).toEqual({ error: 'invalid_request', message: expect.stringContaining('X-Auth-User-Token'), details: { header: 'X-Auth-User-Token' } });
      }
      expect((await call('get', '/auth/user')).status).toBe(200); // still signed in: nothing happened
    });
  });

  itLeakedNoSecrets(t);
});
