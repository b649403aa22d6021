import { useAuthTestService } from './auth-test-service';
import { APP, exchange, OAUTH_ENV, oauthProject, signInThrough, useProviders } from './oauth-support';

describe('sign-in with a provider (OpenID Connect and GitHub) through the gateway', () => {
  const t = useAuthTestService(OAUTH_ENV);
  const p = useProviders();

  it('OpenID Connect: start → provider login → callback → app gets a single-use code → exchange → signed in', async () => {
    const project = await oauthProject(t, p);
    await p.op.account({ sub: 'ada-sub', email: 'Ada@Example.com', email_verified: true });
    const back = await signInThrough(t, project, 'test-op', 'ada-sub');
    expect(back.origin + back.pathname).toBe(APP);
    expect([...back.searchParams.keys()]).toEqual(['code']);
    const session = await exchange(t, project, back.searchParams.get('code') ?? '');
    expect(session.status).toBe(200);
    expect(session.body.user).toMatchObject({ email: 'ada@example.com', email_verified: true, has_password: false, display_name: 'User ada-sub' });
    const me = await t.call({ method: 'get', project, path: '/auth/user', userToken: session.body.access_token });
    expect(me.body.user.id).toBe(session.body.user.id);
    const ids = await t.call({ method: 'get', project, path: '/auth/identities', userToken: session.body.access_token });
    expect(ids.body.identities).toEqual([{ provider: 'test-op', subject: 'ada-sub', email: 'ada@example.com', email_verified: true, created_at: expect.any(String) }]);

    // A second sign-in finds the same user through the linked identity.
    const again = await signInThrough(t, project, 'test-op', 'ada-sub');
    expect((await exchange(t, project, again.searchParams.get('code') ?? '')).body.user.id).toBe(session.body.user.id);
  });

  it('GitHub (plain OAuth 2.0): the primary verified address from /user/emails, the numeric id as subject', async () => {
    const project = await oauthProject(t, p);
    p.github.users.set('octo', { id: 583231, login: 'octo', name: 'The Octocat', emails: [{ email: 'other@example.com', primary: false, verified: true }, { email: 'octo@example.com', primary: true, verified: true }] });
    const back = await signInThrough(t, project, 'github', 'octo');
    const session = await exchange(t, project, back.searchParams.get('code') ?? '');
    expect(session.status).toBe(200);
    expect(session.body.user).toMatchObject({ email: 'octo@example.com', email_verified: true, display_name: 'The Octocat' });
    const ids = await t.call({ method: 'get', project, path: `/auth/users/${session.body.user.id}/identities`, key: 'secret' });
    expect(ids.body.identities).toEqual([expect.objectContaining({ provider: 'github', subject: '583231', email: 'octo@example.com' })]);
  });

  it('provider secrets are write-only: the settings API never answers them, and a PATCH without one keeps it', async () => {
    const project = await oauthProject(t, p);
    const got = await t.call({ method: 'get', project, path: '/settings/auth', key: 'secret' });
    expect(got.body.providers['test-op']).toEqual({ enabled: true, client_id: `plinth-${project}`, issuer: p.op.issuer, client_secret_set: true });
    expect(JSON.stringify(got.body)).not.toContain(`secret-${project}`);
    const patched = await t.call({ method: 'patch', project, path: '/settings/auth', key: 'secret', body: { providers: { 'test-op': { enabled: true, client_id: `plinth-${project}`, issuer: p.op.issuer } } } });
    expect(JSON.stringify(patched.body)).not.toContain(`secret-${project}`);
    // The kept secret still signs in.
    await p.op.account({ sub: 'kept', email: 'kept@example.com', email_verified: true });
    const back = await signInThrough(t, project, 'test-op', 'kept');
    expect(back.searchParams.get('code')).toBeTruthy();
  });
});
