import { startSdkFixture, type SdkFixture } from './fixture';

const PASSWORD = 'sdk anonymous password';

/** Anonymous users through the SDK, against a real standalone Plinth. */
describe('@plinth/client anonymous users', () => {
  let f: SdkFixture;
  const client = (opts: Parameters<SdkFixture['client']>[0] = {}) => f.client(opts);

  beforeAll(async () => {
    f = await startSdkFixture({ send_verification_on_signup: false, allow_anonymous: true });
  });
  afterAll(async () => {
    await f.close();
  });

  it('signInAnonymously stores a session of a user with no address; upgradeAnonymous keeps its id and stores the new session', async () => {
    const c = client();
    const anon = await c.auth.signInAnonymously();
    expect(anon.user).toMatchObject({ email: null, is_anonymous: true });
    expect(c.auth.currentUser?.id).toBe(anon.user.id);

    const up = await c.auth.upgradeAnonymous('sdk-guest@example.com', PASSWORD);
    expect(up.user).toMatchObject({ id: anon.user.id, email: 'sdk-guest@example.com', is_anonymous: false });
    expect((await c.auth.session())?.refresh_token).toBe(up.refresh_token);
    expect((await c.auth.user())?.is_anonymous).toBe(false);

    const again = await client().auth.signIn('sdk-guest@example.com', PASSWORD);
    expect(again.user.id).toBe(anon.user.id);
  });

  it('deleteAccount(null) deletes an anonymous user and signs the client out', async () => {
    const c = client();
    const anon = await c.auth.signInAnonymously();
    await c.auth.deleteAccount(null);
    expect(await c.auth.session()).toBeNull();
    const users = await f.admin.users.list();
    expect(users.users.map((u) => u.id)).not.toContain(anon.user.id);
  });

  it('upgradeAnonymous to a taken address is a ConflictError and the client stays signed in as the anonymous user', async () => {
    await client().auth.signUp({ email: 'sdk-taken@example.com', password: PASSWORD });
    const c = client();
    const anon = await c.auth.signInAnonymously();
    await expect(c.auth.upgradeAnonymous('sdk-taken@example.com', PASSWORD)).rejects.toMatchObject({ status: 409, code: 'conflict' });
    expect((await c.auth.user())?.id).toBe(anon.user.id);
  });
});
