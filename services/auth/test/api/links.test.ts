import { useAuthTestService } from './auth-test-service';
import { itLeakedNoSecrets } from './no-secrets';

const PASSWORD = 'links suite password';
const NEW_PASSWORD = 'a brand new password';
const HOUR = 3_600_000;

describe('Auth API: e-mail verification and password reset', () => {
  const t = useAuthTestService();
  let p: string;
  let session: { access_token: string; refresh_token: string; user: { id: string } };
  beforeEach(async () => {
    p = await t.enabledProject({ send_verification_on_signup: false });
    const r = await t.call({ method: 'post', path: '/auth/signup', project: p, body: { email: 'ada@example.com', password: PASSWORD } });
    session = r.body;
  });

  const tokenOf = async (kind: 'verify' | 'reset') => ((await t.lastMail(p, 'ada@example.com', kind)).data as { token: string }).token;
  const confirm = (token: string) => t.call({ method: 'post', path: '/auth/verify/confirm', project: p, body: { token } });
  const reset = (token: string, password = NEW_PASSWORD) =>
    t.call({ method: 'post', path: '/auth/password/reset', project: p, body: { token, password } });
  const signIn = (password: string) =>
    t.call({ method: 'post', path: '/auth/signin', project: p, body: { email: 'ada@example.com', password } });

  describe('verification', () => {
    it('verify/request mails a link token; confirm sets email_verified and answers the user', async () => {
      const r = await t.call({ method: 'post', path: '/auth/verify/request', project: p, userToken: session.access_token });
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ sent: true });
      const c = await t.call({ method: 'post', path: '/auth/verify/confirm', project: p, body: { token: await tokenOf('verify') }, userToken: session.access_token });
      expect(c.status).toBe(200);
      expect(c.body).toEqual({ verified: true, user: expect.objectContaining({ id: session.user.id, email_verified: true, has_password: true }) });
      const me = await t.call({ method: 'get', path: '/auth/user', project: p, userToken: session.access_token });
      expect(me.body.user.email_verified).toBe(true);
    });

    it('verify/request needs the user token', async () => {
      expect((await t.call({ method: 'post', path: '/auth/verify/request', project: p })).status).toBe(401);
    });

    it('a verification token is single use', async () => {
      await t.call({ method: 'post', path: '/auth/verify/request', project: p, userToken: session.access_token });
      const token = await tokenOf('verify');
      expect((await confirm(token)).status).toBe(200);
      const again = await confirm(token);
      expect(again.status).toBe(400);
      expect(again.body.error).toBe('invalid_request');
    });

    it('a verification token expires after 24 hours; an unknown one is refused', async () => {
      await t.call({ method: 'post', path: '/auth/verify/request', project: p, userToken: session.access_token });
      const token = await tokenOf('verify');
      t.advance(24 * HOUR);
      expect((await confirm(token)).status).toBe(400);
      expect((await confirm('made-up-token')).status).toBe(400);
    });

    it('an already verified user is sent nothing', async () => {
      await t.call({ method: 'post', path: '/auth/verify/request', project: p, userToken: session.access_token });
      await confirm(await tokenOf('verify'));
      await t.call({ method: 'post', path: '/auth/verify/request', project: p, userToken: session.access_token });
      expect((await t.mails(p)).filter((j) => j.kind === 'verify')).toHaveLength(1);
    });
  });

  describe('password reset', () => {
    it('forgot answers {sent:true} always, and mails a link only to a known user', async () => {
      const known = await t.call({ method: 'post', path: '/auth/password/forgot', project: p, body: { email: 'ADA@example.com' } });
      const unknown = await t.call({ method: 'post', path: '/auth/password/forgot', project: p, body: { email: 'no@example.com' } });
      expect(known.body).toEqual({ sent: true });
      expect(unknown.body).toEqual({ sent: true });
      expect(await tokenOf('reset')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(await t.mails(p, 'no@example.com')).toEqual([]);
    });

    it('reset sets the new password and revokes every session', async () => {
      await t.call({ method: 'post', path: '/auth/password/forgot', project: p, body: { email: 'ada@example.com' } });
      const r = await reset(await tokenOf('reset'));
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ reset: true });
      expect((await t.call({ method: 'get', path: '/auth/user', project: p, userToken: session.access_token })).status).toBe(401);
      expect((await t.call({ method: 'post', path: '/auth/refresh', project: p, body: { refresh_token: session.refresh_token } })).status).toBe(401);
      expect((await signIn(PASSWORD)).status).toBe(401);
      expect((await signIn(NEW_PASSWORD)).status).toBe(200);
    });

    it('a reset token is single use and expires after an hour', async () => {
      await t.call({ method: 'post', path: '/auth/password/forgot', project: p, body: { email: 'ada@example.com' } });
      const token = await tokenOf('reset');
      expect((await reset(token)).status).toBe(200);
      expect((await reset(token, 'yet another password')).status).toBe(400);
      t.advance(61_000);
      await t.call({ method: 'post', path: '/auth/password/forgot', project: p, body: { email: 'ada@example.com' } });
      const late = await tokenOf('reset');
      t.advance(HOUR);
      const r = await reset(late, 'yet another password');
      expect(r.status).toBe(400);
      expect(r.body.details.fields).toContainEqual({ field: 'token', message: expect.any(String) });
      expect((await signIn(NEW_PASSWORD)).status).toBe(200);
    });

    it('a too-short new password answers 400 and leaves the token usable', async () => {
      await t.call({ method: 'post', path: '/auth/password/forgot', project: p, body: { email: 'ada@example.com' } });
      const token = await tokenOf('reset');
      const bad = await reset(token, 'short');
      expect(bad.status).toBe(400);
      expect(bad.body.details.fields).toContainEqual({ field: 'password', message: expect.any(String) });
      expect((await reset(token)).status).toBe(200);
    });

    it('a verification token is not a reset token', async () => {
      await t.call({ method: 'post', path: '/auth/verify/request', project: p, userToken: session.access_token });
      expect((await reset(await tokenOf('verify'))).status).toBe(400);
    });

    it('admin send-reset mails a reset link; unknown user → 404', async () => {
      const r = await t.call({ method: 'post', path: `/auth/users/${session.user.id}/send-reset`, key: 'secret', project: p });
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ sent: true });
      expect((await reset(await tokenOf('reset'))).status).toBe(200);
      const none = await t.call({ method: 'post', path: '/auth/users/usr_nope/send-reset', key: 'secret', project: p });
      expect(none.status).toBe(404);
    });
  });

  itLeakedNoSecrets(t);
});
