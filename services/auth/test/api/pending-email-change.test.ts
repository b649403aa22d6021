import { itLeakedNoPasswords, useMailboxPlinth } from './mailbox-plinth';

const PASSWORD = 'pending change password';
const NEW_PASSWORD = 'pending change new password';
const OLD = 'owner@example.com';
const NEW = 'elsewhere@example.com';

/**
 * A pending e-mail change ends with what the notice tells the owner to do: a password
 * reset, a password change, sign-out-all, or the cancel link in the notice itself; and with the
 * session that asked for it. Real
 * standalone composition; links and codes come from the dev mailbox.
 */
describe('Auth API: a pending e-mail change is cancelled by reset, change, sign-out-all and the notice\'s link', () => {
  const t = useMailboxPlinth();
  let session: { access_token: string; refresh_token: string };
  /** The confirmation link sent to the new address. */
  let link: string;
  beforeEach(async () => {
    await t.useNewProject({ send_verification_on_signup: false });
    session = (await t.post('/auth/signup', { email: OLD, password: PASSWORD })).body;
    expect((await t.post('/auth/email/change', { new_email: NEW, password: PASSWORD }, session.access_token)).body).toEqual({ sent: true });
    link = (await t.nextMail(NEW, 'email-change')).data.token!;
  });

  /** The change link no longer works, and the account still has its old address. */
  async function expectCancelled(): Promise<void> {
    const confirm = await t.post('/auth/email/confirm', { token: link });
    expect(confirm.status).toBe(400);
    expect(confirm.body.details.field).toBe('token');
    const users = await t.call({ method: 'get', path: `/auth/users?search=${encodeURIComponent(OLD)}`, key: 'secret' });
    expect(users.body.users).toEqual([expect.objectContaining({ email: OLD })]);
  }

  it('a password reset cancels it', async () => {
    await t.post('/auth/password/forgot', { email: OLD });
    const reset = await t.post('/auth/password/reset', { token: (await t.nextMail(OLD, 'reset')).data.token, password: NEW_PASSWORD });
    expect(reset.status).toBe(200);
    await expectCancelled();
  });

  it('a password change cancels it', async () => {
    const changed = await t.post('/auth/password/change', { current_password: PASSWORD, new_password: NEW_PASSWORD }, session.access_token);
    expect(changed.status).toBe(200);
    await expectCancelled();
  });

  it('sign-out-all cancels it', async () => {
    const out = await t.post('/auth/signout-all', {}, session.access_token);
    expect(out.body).toEqual({ signed_out: true, everywhere: true });
    await expectCancelled();
  });

  it('the link in the notice to the old address cancels it and signs out every session; it works once', async () => {
    const notice = await t.nextMail(OLD, 'email-changed');
    expect(notice.data.new_email).toBe(NEW);
    expect(notice.text).toContain('type=email-change-cancel');
    const cancel = await t.post('/auth/email/cancel', { token: notice.data.token! });
    expect(cancel.status).toBe(200);
    expect(cancel.body).toEqual({ cancelled: true });
    expect((await t.call({ method: 'get', path: '/auth/user', userToken: session.access_token })).status).toBe(401);
    await expectCancelled();
    expect((await t.post('/auth/email/cancel', { token: notice.data.token! })).status).toBe(400);
  });

  it('signing out the session that asked ends it', async () => {
    expect((await t.post('/auth/signout', { refresh_token: session.refresh_token })).status).toBe(200);
    await expectCancelled();
  });

  it('signing out another session leaves it pending; confirming then works and the cancel link dies', async () => {
    const other = (await t.post('/auth/signin', { email: OLD, password: PASSWORD })).body;
    expect((await t.post('/auth/signout', { refresh_token: other.refresh_token })).status).toBe(200);
    const notice = await t.nextMail(OLD, 'email-changed');
    const confirm = await t.post('/auth/email/confirm', { token: link, password: PASSWORD });
    expect(confirm.status).toBe(200);
    expect(confirm.body.user.email).toBe(NEW);
    expect((await t.post('/auth/email/cancel', { token: notice.data.token! })).status).toBe(400);
  });

  itLeakedNoPasswords(t);
});
