import { PlinthError } from '../src';
import { startSdkFixture, type SdkFixture } from './fixture';

const PASSWORD = 'self service password';

/** The signed-in user's own account through the SDK, against a real standalone Plinth. */
describe('@plinth/client auth self-service', () => {
  let f: SdkFixture;
  const client = (opts: Parameters<SdkFixture['client']>[0] = {}) => f.client(opts);
  const rawRefresh = async (refresh_token: string) =>
    (
      await fetch(`${f.url}/v1/projects/${f.project}/auth/refresh`, {
        method: 'POST',
        headers: { authorization: `Bearer ${f.pk}`, 'content-type': 'application/json' },
        body: JSON.stringify({ refresh_token }),
      })
    ).status;

  beforeAll(async () => {
    f = await startSdkFixture({ send_verification_on_signup: false });
  });
  afterAll(async () => {
    await f.close();
  });

  it('updateProfile changes the display name and photo, and the stored user with them', async () => {
    const c = client();
    await c.auth.signUp({ email: 'self-profile@example.com', password: PASSWORD });
    const user = await c.auth.updateProfile({ displayName: 'Self', photoUrl: 'https://example.com/me.png' });
    expect(user).toMatchObject({ display_name: 'Self', photo_url: 'https://example.com/me.png' });
    expect(c.auth.currentUser?.display_name).toBe('Self');
    expect((await c.auth.session())?.user.display_name).toBe('Self');
    expect((await c.auth.updateProfile({ photoUrl: null })).photo_url).toBeNull();
    await expect(client().auth.updateProfile({ displayName: 'x' })).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
  });

  it('changePassword: a wrong current password is 403; the right one ends the old sessions and stores the new one', async () => {
    const c = client();
    const old = await c.auth.signUp({ email: 'self-password@example.com', password: PASSWORD });
    const wrong = await c.auth.changePassword('not it at all', 'a new password').catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(PlinthError);
    expect(wrong).toMatchObject({ status: 403, code: 'forbidden' });
    const next = await c.auth.changePassword(PASSWORD, 'a new password');
    expect(next.refresh_token).not.toBe(old.refresh_token);
    expect((await c.auth.session())?.refresh_token).toBe(next.refresh_token);
    expect(await rawRefresh(old.refresh_token)).toBe(401);
    expect((await c.auth.user())?.email).toBe('self-password@example.com');
    await expect(client().auth.signIn('self-password@example.com', PASSWORD)).rejects.toMatchObject({ status: 401 });
    await client().auth.signIn('self-password@example.com', 'a new password');
  });

  it('changeEmail mails a link to the new address; confirmEmailChange switches the address', async () => {
    const c = client();
    await c.auth.signUp({ email: 'self-old@example.com', password: PASSWORD });
    await c.auth.changeEmail('self-new@example.com', PASSWORD);
    const { token } = await f.mail('self-new@example.com', 'email-change');
    const user = await c.auth.confirmEmailChange(token!);
    expect(user).toMatchObject({ email: 'self-new@example.com', email_verified: true });
    expect(c.auth.currentUser?.email).toBe('self-new@example.com');
    await client().auth.signIn('self-new@example.com', PASSWORD);
    await expect(c.auth.confirmEmailChange(token!)).rejects.toMatchObject({ status: 400, code: 'invalid_request' });
  });

  it('confirmEmailChange from another client (not signed in as the account) hands it to the new address\'s owner; cancelEmailChange ends a pending change', async () => {
    const c = client();
    const before = await c.auth.signUp({ email: 'self-other@example.com', password: PASSWORD });
    await c.auth.changeEmail('self-other-new@example.com', PASSWORD);
    const { token } = await f.mail('self-other-new@example.com', 'email-change');
    const user = await client().auth.confirmEmailChange(token!);
    expect(user).toMatchObject({ email: 'self-other-new@example.com', has_password: false });
    expect(await rawRefresh(before.refresh_token)).toBe(401);

    const d = client();
    await d.auth.signUp({ email: 'self-cancel@example.com', password: PASSWORD });
    await d.auth.changeEmail('self-cancel-new@example.com', PASSWORD);
    const notice = await f.mail('self-cancel@example.com', 'email-changed');
    await client().auth.cancelEmailChange(notice.token!);
    const link = await f.mail('self-cancel-new@example.com', 'email-change');
    await expect(client().auth.confirmEmailChange(link.token!)).rejects.toMatchObject({ status: 400 });
  });

  it('reauthenticate with the password stores a new session; a wrong one is 403', async () => {
    const c = client();
    const old = await c.auth.signUp({ email: 'self-reauth@example.com', password: PASSWORD });
    await expect(c.auth.reauthenticate({ password: 'not it at all' })).rejects.toMatchObject({ status: 403, code: 'forbidden' });
    const next = await c.auth.reauthenticate({ password: PASSWORD });
    expect((await c.auth.session())?.refresh_token).toBe(next.refresh_token);
    expect(await rawRefresh(old.refresh_token)).toBe(401);
    expect((await c.auth.user())?.email).toBe('self-reauth@example.com');
  });

  it('deleteAccount with the password (a wrong one is 403) or with a one-time code; the session is gone', async () => {
    const c = client();
    const s = await c.auth.signUp({ email: 'self-delete@example.com', password: PASSWORD });
    await expect(c.auth.deleteAccount({ password: 'wrong password' })).rejects.toMatchObject({ status: 403, code: 'forbidden' });
    await c.auth.deleteAccount({ password: PASSWORD });
    expect(await c.auth.session()).toBeNull();
    expect(await rawRefresh(s.refresh_token)).toBe(401);
    await expect(c.auth.signIn('self-delete@example.com', PASSWORD)).rejects.toMatchObject({ status: 401 });

    const d = client();
    await d.auth.signUp({ email: 'self-delete-code@example.com', password: PASSWORD });
    await d.auth.requestOtp('self-delete-code@example.com');
    const { code } = await f.mail('self-delete-code@example.com', 'otp');
    await d.auth.deleteAccount({ code: code! });
    expect(d.auth.currentUser).toBeNull();
    expect((await f.admin.users.list({ search: 'self-delete-code' })).total).toBe(0);
  });
});
