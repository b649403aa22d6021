import { itLeakedNoPasswords, useMailboxPlinth } from './mailbox-plinth';

const PASSWORD = 'recent proof password';

/** Waits past a one-second reauthentication window (real time: the composition runs on the system clock). */
const pastTheWindow = () => new Promise((r) => setTimeout(r, 1_200));

/**
 * Sensitive changes need recent proof: a sign-in of the session within the
 * project's `reauthentication_window`, or a password or code in the request itself.
 */
describe('Auth API: sensitive changes need a recent sign-in', () => {
  const t = useMailboxPlinth();

  /** A password-less account (a code sign-in), in a project whose window is `seconds`. */
  async function passwordless(email: string, seconds: number) {
    await t.useNewProject({ otp_creates_users: true, reauthentication_window: seconds });
    await t.post('/auth/otp/request', { email });
    const s = await t.post('/auth/otp/redeem', { email, code: (await t.nextMail(email, 'otp')).data.code });
    expect(s.body.user.has_password).toBe(false);
    return s.body as { access_token: string; refresh_token: string; user: { id: string } };
  }

  it('a leaked access token alone cannot change the e-mail: older than the window → 403 reauthentication_required, nothing sent', async () => {
    const s = await passwordless('leak@example.com', 1);
    await pastTheWindow();
    // A refresh renews the token, not the sign-in.
    const refreshed = await t.post('/auth/refresh', { refresh_token: s.refresh_token });
    const r = await t.post('/auth/email/change', { new_email: 'thief@example.com' }, refreshed.body.access_token);
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ error: 'reauthentication_required', message: expect.any(String), details: { reauthentication_window: 1 } });
    expect(await t.countMails('thief@example.com', 'email-change')).toBe(0);
    expect((await t.call({ method: 'get', path: '/auth/user', userToken: refreshed.body.access_token })).body.user.email).toBe('leak@example.com');
  });

  it('reauthenticate with a fresh code answers a new session that may change the e-mail; the old session ends', async () => {
    const s = await passwordless('again@example.com', 1);
    await pastTheWindow();
    expect((await t.post('/auth/email/change', { new_email: 'again.new@example.com' }, s.access_token)).status).toBe(403);

    await t.post('/auth/otp/request', { email: 'again@example.com' });
    const code = (await t.nextMail('again@example.com', 'otp')).data.code!;
    const wrong = await t.post('/auth/reauthenticate', { code: code === '000000' ? '000001' : '000000' }, s.access_token);
    expect(wrong.status).toBe(403);
    expect(wrong.body.error).toBe('forbidden');
    const fresh = await t.post('/auth/reauthenticate', { code }, s.access_token);
    expect(fresh.status).toBe(200);
    expect(fresh.body.refresh_token).toMatch(/^frt_/);
    expect((await t.call({ method: 'get', path: '/auth/user', userToken: s.access_token })).status).toBe(401);

    const r = await t.post('/auth/email/change', { new_email: 'again.new@example.com' }, fresh.body.access_token);
    expect(r.body).toEqual({ sent: true });
    expect(await t.countMails('again.new@example.com', 'email-change')).toBe(1);
  });

  it('a password-less account adds a password (a new sign-in method) only with a recent sign-in', async () => {
    const s = await passwordless('first.password@example.com', 1);
    const soon = await t.post('/auth/password/change', { new_password: PASSWORD }, s.access_token);
    expect(soon.status).toBe(200);
    expect(soon.body.user.has_password).toBe(true);

    const later = await passwordless('late.password@example.com', 1);
    await pastTheWindow();
    const refused = await t.post('/auth/password/change', { new_password: PASSWORD }, later.access_token);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('reauthentication_required');
    expect((await t.post('/auth/signin', { email: 'late.password@example.com', password: PASSWORD })).status).toBe(401);
  });

  it('a request that carries the current password is its own proof, however old the sign-in; without it → 400', async () => {
    await t.useNewProject({ send_verification_on_signup: false, reauthentication_window: 1 });
    const s = (await t.post('/auth/signup', { email: 'pw@example.com', password: PASSWORD })).body;
    await pastTheWindow();
    expect((await t.post('/auth/password/change', { new_password: 'a second password' }, s.access_token)).status).toBe(400);
    const changed = await t.post('/auth/password/change', { current_password: PASSWORD, new_password: 'a second password' }, s.access_token);
    expect(changed.status).toBe(200);
    await pastTheWindow();
    const asked = await t.post('/auth/email/change', { new_email: 'pw.new@example.com', password: 'a second password' }, changed.body.access_token);
    expect(asked.body).toEqual({ sent: true });
  });

  it('reauthenticate with the password; a wrong one → 403', async () => {
    await t.useNewProject({ send_verification_on_signup: false });
    const s = (await t.post('/auth/signup', { email: 'reauth@example.com', password: PASSWORD })).body;
    expect((await t.post('/auth/reauthenticate', { password: 'not the password' }, s.access_token)).status).toBe(403);
    expect((await t.post('/auth/reauthenticate', {}, s.access_token)).status).toBe(400);
    expect((await t.post('/auth/reauthenticate', { password: PASSWORD })).status).toBe(401);
    const r = await t.post('/auth/reauthenticate', { password: PASSWORD }, s.access_token);
    expect(r.status).toBe(200);
    expect((await t.call({ method: 'get', path: '/auth/user', userToken: r.body.access_token })).status).toBe(200);
  });

  itLeakedNoPasswords(t);
});
