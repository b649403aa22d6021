import { Secret, TOTP } from 'otpauth';
import { loginAtProvider } from '../../../../test/oauth/support/provider-login';
import { useAuthTestService } from './auth-test-service';
import { APP, callback, exchange, OAUTH_ENV, oauthProject, signInThrough, useProviders } from './oauth-support';

describe('linked identities: explicit linking, unlinking, deletion', () => {
  const t = useAuthTestService(OAUTH_ENV);
  const p = useProviders();

  async function passwordUser(project: string, email: string): Promise<{ id: string; token: string }> {
    const r = await t.call({ method: 'post', project, path: '/auth/signup', body: { email, password: 'a long password' } });
    return { id: r.body.user.id, token: r.body.access_token };
  }

  /** Follows a link URL (as the browser would) through the provider back to the app. */
  async function followLink(project: string, url: string, login: string): Promise<URL> {
    const u = new URL(url);
    const r = await t.call({ method: 'get', project, key: 'none', path: u.pathname.replace(`/v1/projects/${project}`, '') + u.search });
    expect(r.status).toBe(302);
    const cookie = ((r.headers['set-cookie'] as unknown as string[])[0] ?? '').split(';')[0] ?? '';
    const back = await callback(t, project, await loginAtProvider(r.headers.location ?? '', login), cookie);
    return back.location as URL;
  }

  it('a signed-in user links a provider account whatever its address; then signs in with it; a used link ticket is refused', async () => {
    const project = await oauthProject(t, p);
    const me = await passwordUser(project, 'mine@example.com');
    await p.op.account({ sub: 'my-other-account', email: 'different@example.com', email_verified: false });
    const link = await t.call({ method: 'post', project, path: '/auth/oauth/test-op/link', userToken: me.token, body: { redirect_to: APP } });
    expect(link.status).toBe(200);
    const back = await followLink(project, link.body.url, 'my-other-account');
    expect((await exchange(t, project, back.searchParams.get('code') ?? '')).body.user.id).toBe(me.id);
    const again = await signInThrough(t, project, 'test-op', 'my-other-account');
    expect((await exchange(t, project, again.searchParams.get('code') ?? '')).body.user.id).toBe(me.id);
    const reused = new URL(link.body.url);
    const r = await t.call({ method: 'get', project, key: 'none', path: reused.pathname.replace(`/v1/projects/${project}`, '') + reused.search });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('invalid_grant');
  });

  it('linking a provider account that belongs to another user → error=account_exists', async () => {
    const project = await oauthProject(t, p);
    await p.op.account({ sub: 'taken', email: 'taken@example.com', email_verified: true });
    await signInThrough(t, project, 'test-op', 'taken');
    const me = await passwordUser(project, 'me2@example.com');
    const link = await t.call({ method: 'post', project, path: '/auth/oauth/test-op/link', userToken: me.token, body: { redirect_to: APP } });
    expect((await followLink(project, link.body.url, 'taken')).searchParams.get('error')).toBe('account_exists');
  });

  it('unlinking: refused for the last way in (409), allowed with a password; the identity then no longer signs that user in', async () => {
    const project = await oauthProject(t, p);
    await p.op.account({ sub: 'solo', email: 'solo@example.com', email_verified: true });
    const s = await exchange(t, project, (await signInThrough(t, project, 'test-op', 'solo')).searchParams.get('code') ?? '');
    const last = await t.call({ method: 'delete', project, path: '/auth/identities/test-op', userToken: s.body.access_token });
    expect(last.status).toBe(409);
    expect(last.body).toMatchObject({ error: 'conflict', details: { reason: 'last_sign_in_method' } });
    expect((await t.call({ method: 'delete', project, path: '/auth/identities/github', userToken: s.body.access_token })).status).toBe(404);

    const me = await passwordUser(project, 'withpw@example.com');
    const link = await t.call({ method: 'post', project, path: '/auth/oauth/github/link', userToken: me.token, body: { redirect_to: APP } });
    p.github.users.set('pw-octo', { id: 4242, login: 'pw-octo', name: 'P', emails: [{ email: 'pw-octo@example.com', primary: true, verified: true }] });
    await followLink(project, link.body.url, 'pw-octo');
    const unlinked = await t.call({ method: 'delete', project, path: '/auth/identities/github', userToken: me.token });
    expect(unlinked.body).toEqual({ unlinked: true });
    expect((await t.call({ method: 'get', project, path: '/auth/identities', userToken: me.token })).body.identities).toEqual([]);
    // Signing in with it now makes a new user of its own address.
    const fresh = await exchange(t, project, (await signInThrough(t, project, 'github', 'pw-octo')).searchParams.get('code') ?? '');
    expect(fresh.body.user.id).not.toBe(me.id);
  });

  it('deleting the user deletes its identities: the provider account then makes a new user', async () => {
    const project = await oauthProject(t, p);
    await p.op.account({ sub: 'gone', email: 'gone@example.com', email_verified: true });
    const first = await exchange(t, project, (await signInThrough(t, project, 'test-op', 'gone')).searchParams.get('code') ?? '');
    expect((await t.call({ method: 'delete', project, path: `/auth/users/${first.body.user.id}`, key: 'secret' })).status).toBe(200);
    const second = await exchange(t, project, (await signInThrough(t, project, 'test-op', 'gone')).searchParams.get('code') ?? '');
    expect(second.body.user.id).not.toBe(first.body.user.id);
  });

  it('two-factor sign-in applies to a provider sign-in: the exchange answers 401 mfa_required and a challenge, no session', async () => {
    const project = await oauthProject(t, p);
    await p.op.account({ sub: 'two-factor', email: 'two-factor@example.com', email_verified: true });
    const first = await exchange(t, project, (await signInThrough(t, project, 'test-op', 'two-factor')).searchParams.get('code') ?? '');
    const enroll = await t.call({ method: 'post', project, path: '/auth/mfa/totp/enroll', userToken: first.body.access_token });
    expect(enroll.status).toBe(200);
    const code = TOTP.generate({ secret: Secret.fromBase32(enroll.body.secret as string), timestamp: t.now });
    expect((await t.call({ method: 'post', project, path: '/auth/mfa/totp/confirm', userToken: first.body.access_token, body: { code } })).status).toBe(200);
    t.advance(30_000);
    const second = await exchange(t, project, (await signInThrough(t, project, 'test-op', 'two-factor')).searchParams.get('code') ?? '');
    expect(second.status).toBe(401);
    expect(second.body).toMatchObject({ error: 'mfa_required', details: { challenge: expect.any(String) } });
    expect(second.body.access_token).toBeUndefined();
    const verified = await t.call({ method: 'post', project, path: '/auth/mfa/verify', body: { challenge: second.body.details.challenge, code: TOTP.generate({ secret: Secret.fromBase32(enroll.body.secret as string), timestamp: t.now }) } });
    expect(verified.status).toBe(200);
    expect(verified.body.user.id).toBe(first.body.user.id);
  });

  it('a generic provider needs an issuer, and microsoft a tenant of its own (400 naming the field)', async () => {
    const project = await t.newProject();
    await t.configure(project);
    const bad = await t.call({ method: 'patch', project, path: '/settings/auth', key: 'secret', body: { providers: { acme: { client_id: 'x', client_secret: 'y' } } } });
    expect(bad.status).toBe(400);
    expect(bad.body.details.field).toBe('providers.acme.issuer');
    const ms = await t.call({ method: 'patch', project, path: '/settings/auth', key: 'secret', body: { providers: { microsoft: { client_id: 'x', client_secret: 'y', tenant: 'common' } } } });
    expect(ms.body.details.field).toBe('providers.microsoft.tenant');
  });
});
