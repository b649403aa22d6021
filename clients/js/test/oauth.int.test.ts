import { freePort } from '@plinth/testing/free-port';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { TestOpenIdProvider } from '../../../test/oauth/support/openid-provider';
import { loginAtProvider } from '../../../test/oauth/support/provider-login';
import { createAdminClient } from '../src/admin';
import { createClient, type PlinthClient } from '../src';

const APP = 'http://app.example/signed-in';

/** Provider sign-in through the SDK against a real standalone Plinth and oidc-provider. */
describe('@plinth/client provider sign-in', () => {
  let t: TestPlinth;
  let op: TestOpenIdProvider;
  let base: string;
  const clients: PlinthClient[] = [];
  const client = () => {
    const c = createClient({ url: base, project: t.project.id, key: t.project.publicKey });
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    op = await TestOpenIdProvider.start();
    t = await startTestPlinth({ env: { PLINTH_PUBLIC_URL: base, PLINTH_OAUTH_ALLOW_HTTP: 'true' }, gatewayPort: port });
    await t.url();
    await op.registerClient({ client_id: 'sdk', client_secret: 'sdk-secret', redirect_uris: [`${base}/v1/projects/${t.project.id}/auth/oauth/callback`] });
    const admin = createAdminClient({ url: base, project: t.project.id, secretKey: t.project.secretKey });
    await admin.authSettings.update({ enabled: true, redirect_urls: [APP], providers: { acme: { client_id: 'sdk', client_secret: 'sdk-secret', issuer: op.issuer } } } as never);
  }, 60_000);
  afterAll(async () => {
    for (const c of clients) c.close();
    await t.close();
    await op.close();
  });

  /** What a browser does between signInWithOAuth (redirect) and the app's page: the address it lands on. */
  async function landOnApp(login: string): Promise<string> {
    const start = `${base}/v1/projects/${t.project.id}/auth/oauth/acme/start?redirect_to=${encodeURIComponent(APP)}`;
    const s = await fetch(start, { redirect: 'manual' });
    const cookie = (s.headers.getSetCookie()[0] ?? '').split(';')[0] ?? '';
    const back = await fetch(await loginAtProvider(s.headers.get('location') ?? '', login), { redirect: 'manual', headers: { cookie } });
    return back.headers.get('location') ?? '';
  }

  it('completeOAuthRedirect trades the code on the app\'s address for a stored session; identities lists the provider', async () => {
    const c = client();
    const landed = await landOnApp('sdk-user');
    const session = await c.auth.completeOAuthRedirect(landed);
    expect(session?.user.email).toBe('sdk-user@example.com');
    expect(c.auth.currentUser?.id).toBe(session?.user.id);
    expect(await c.auth.identities()).toEqual([expect.objectContaining({ provider: 'acme', subject: 'sdk-user' })]);
    await expect(c.auth.unlinkIdentity('acme')).rejects.toMatchObject({ status: 409, code: 'conflict' });
    // The code was single-use.
    await expect(client().auth.completeOAuthRedirect(landed)).rejects.toMatchObject({ status: 400, code: 'invalid_grant' });
    expect(await client().auth.completeOAuthRedirect(APP)).toBeNull();
  });

  it('an error on the app\'s address is thrown as a PlinthError with its code', async () => {
    await expect(client().auth.completeOAuthRedirect(`${APP}?error=account_exists&error_description=exists`)).rejects.toMatchObject({ status: 409, code: 'account_exists' });
  });
});
