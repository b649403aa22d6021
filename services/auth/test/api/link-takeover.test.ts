import { itLeakedNoPasswords, useMailboxPlinth } from './mailbox-plinth';

const VICTIM = 'victim@example.com';
const ATTACKER = 'attacker@example.com';
const ATTACKER_PASSWORD = 'attacker chose this';
const OWNER_PASSWORD = 'the owner chose this';

/**
 * Pre-hijacking through links: whoever proves an address by a verification or
 * e-mail-change link gets the account, and every claim made before ends — unless the
 * confirmation also proves the account (its password or a live session). Real standalone
 * composition; the links are read from the dev mailbox.
 */
describe('Auth API: verification and e-mail-change links prove ownership and end every other claim', () => {
  const t = useMailboxPlinth();
  beforeEach(async () => {
    await t.useNewProject();
  });

  const signIn = (email: string, password: string) => t.post('/auth/signin', { email, password });
  const me = (token: string) => t.call({ method: 'get', path: '/auth/user', userToken: token });
  const refresh = (token: string) => t.post('/auth/refresh', { refresh_token: token });

  it('(a) the attacker signs up with the victim\'s address; the victim confirms the verification mail: the attacker\'s password and sessions stop working', async () => {
    const attacker = await t.post('/auth/signup', { email: VICTIM, password: ATTACKER_PASSWORD });
    expect(attacker.status).toBe(201);
    const second = await signIn(VICTIM, ATTACKER_PASSWORD);
    expect(second.status).toBe(200);

    const mail = await t.nextMail(VICTIM, 'verify');
    const confirmed = await t.post('/auth/verify/confirm', { token: mail.data.token });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toEqual({ verified: true, user: expect.objectContaining({ email: VICTIM, email_verified: true, has_password: false }) });

    expect((await signIn(VICTIM, ATTACKER_PASSWORD)).status).toBe(401);
    for (const s of [attacker.body, second.body]) {
      expect((await me(s.access_token)).status).toBe(401);
      expect((await refresh(s.refresh_token)).status).toBe(401);
    }
    // The owner's own way in still works: a code, then a password of their own through reset.
    expect((await t.post('/auth/otp/request', { email: VICTIM })).status).toBe(200);
    const owner = await t.post('/auth/otp/redeem', { email: VICTIM, code: (await t.nextMail(VICTIM, 'otp')).data.code });
    expect(owner.status).toBe(200);
    expect(owner.body.user.id).toBe(attacker.body.user.id);
  });

  it('(b) the attacker\'s account asks to change its e-mail to the victim\'s; the victim confirms: the attacker\'s password and sessions stop working', async () => {
    const attacker = await t.post('/auth/signup', { email: ATTACKER, password: ATTACKER_PASSWORD });
    expect(attacker.status).toBe(201);
    const asked = await t.post('/auth/email/change', { new_email: VICTIM, password: ATTACKER_PASSWORD }, attacker.body.access_token);
    expect(asked.body).toEqual({ sent: true });

    const link = await t.nextMail(VICTIM, 'email-change');
    const confirmed = await t.post('/auth/email/confirm', { token: link.data.token });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toEqual({ changed: true, user: expect.objectContaining({ email: VICTIM, email_verified: true, has_password: false }) });

    expect((await signIn(VICTIM, ATTACKER_PASSWORD)).status).toBe(401);
    expect((await signIn(ATTACKER, ATTACKER_PASSWORD)).status).toBe(401);
    expect((await me(attacker.body.access_token)).status).toBe(401);
    expect((await refresh(attacker.body.refresh_token)).status).toBe(401);
    // The victim's later code sign-in takes the account as it is now.
    await t.post('/auth/otp/request', { email: VICTIM });
    const victim = await t.post('/auth/otp/redeem', { email: VICTIM, code: (await t.nextMail(VICTIM, 'otp')).data.code });
    expect(victim.status).toBe(200);
    expect(victim.body.user).toMatchObject({ email: VICTIM, has_password: false });
  });

  it('the owner who confirms with the account\'s password, or from its live session, keeps the password and every session', async () => {
    const owner = await t.post('/auth/signup', { email: VICTIM, password: OWNER_PASSWORD });
    const byPassword = await t.post('/auth/verify/confirm', { token: (await t.nextMail(VICTIM, 'verify')).data.token, password: OWNER_PASSWORD });
    expect(byPassword.status).toBe(200);
    expect(byPassword.body.user).toMatchObject({ email_verified: true, has_password: true });
    expect((await me(owner.body.access_token)).status).toBe(200);

    await t.post('/auth/email/change', { new_email: 'owner.new@example.com', password: OWNER_PASSWORD }, owner.body.access_token);
    const link = await t.nextMail('owner.new@example.com', 'email-change');
    const bySession = await t.post('/auth/email/confirm', { token: link.data.token }, owner.body.access_token);
    expect(bySession.status).toBe(200);
    expect(bySession.body.user).toMatchObject({ email: 'owner.new@example.com', has_password: true });
    expect((await me(owner.body.access_token)).status).toBe(200);
    expect((await signIn('owner.new@example.com', OWNER_PASSWORD)).status).toBe(200);
  });

  it('a wrong password or another account\'s session at confirm → 403, nothing changes and the link still works', async () => {
    const attacker = await t.post('/auth/signup', { email: VICTIM, password: ATTACKER_PASSWORD });
    const token = (await t.nextMail(VICTIM, 'verify')).data.token;
    const other = await t.post('/auth/signup', { email: 'someone.else@example.com', password: OWNER_PASSWORD });

    const wrong = await t.post('/auth/verify/confirm', { token, password: 'not the password' });
    expect(wrong.status).toBe(403);
    expect(wrong.body.error).toBe('forbidden');
    const foreign = await t.post('/auth/verify/confirm', { token }, other.body.access_token);
    expect(foreign.status).toBe(403);
    expect((await me(attacker.body.access_token)).body.user.email_verified).toBe(false);

    expect((await t.post('/auth/verify/confirm', { token })).status).toBe(200);
    expect((await me(attacker.body.access_token)).status).toBe(401);
  });

  it('an address that already has a verified owner is refused: a stale verification link changes nothing', async () => {
    const owner = await t.post('/auth/signup', { email: VICTIM, password: OWNER_PASSWORD });
    const token = (await t.nextMail(VICTIM, 'verify')).data.token;
    const patched = await t.call({ method: 'patch', path: `/auth/users/${owner.body.user.id}`, key: 'secret', body: { email_verified: true } });
    expect(patched.status).toBe(200);

    const stale = await t.post('/auth/verify/confirm', { token });
    expect(stale.status).toBe(400);
    expect(stale.body.details.field).toBe('token');
    expect((await me(owner.body.access_token)).status).toBe(200);
    expect((await signIn(VICTIM, OWNER_PASSWORD)).status).toBe(200);
  });

  it('the hosted page (a form-encoded POST): confirming without a password hands the account over; with the right one keeps it', async () => {
    const attacker = await t.post('/auth/signup', { email: VICTIM, password: ATTACKER_PASSWORD });
    const token = (await t.nextMail(VICTIM, 'verify')).data.token;
    const form = await t.call({ method: 'get', path: `/auth/action?type=verify&token=${token}` });
    expect(form.status).toBe(200);
    // Posted as the page's HTML form posts it: form-encoded.
    const page = await t.call({ method: 'post', path: '/auth/action', form: true, body: { type: 'verify', token, password: '' } });
    expect(page.status).toBe(200);
    expect(page.text).toContain('The account is yours now');
    expect((await me(attacker.body.access_token)).status).toBe(401);
    expect((await signIn(VICTIM, ATTACKER_PASSWORD)).status).toBe(401);

    const owner = await t.post('/auth/signup', { email: 'owner@example.com', password: OWNER_PASSWORD });
    const ownToken = (await t.nextMail('owner@example.com', 'verify')).data.token;
    const kept = await t.call({ method: 'post', path: '/auth/action', form: true, body: { type: 'verify', token: ownToken, password: OWNER_PASSWORD } });
    expect(kept.status).toBe(200);
    expect(kept.text).toContain('You can close this page');
    expect((await me(owner.body.access_token)).body.user).toMatchObject({ email_verified: true, has_password: true });
  });

  itLeakedNoPasswords(t);
});
