import { loginAtProvider } from '../../../../test/oauth/support/provider-login';
import { useAuthTestService, type AuthTestService } from './auth-test-service';
import { APP, callback, exchange, OAUTH_ENV, oauthProject, PUBLIC_URL, signInThrough, start, useProviders } from './oauth-support';

/** Whether any user of the project has this address (a refused sign-in must create none). */
async function userExists(t: AuthTestService, project: string, email: string): Promise<boolean> {
  const r = await t.call({ method: 'get', project, path: `/auth/users?search=${encodeURIComponent(email)}`, key: 'secret' });
  return r.body.total > 0;
}

describe('provider sign-in attacks: each refused with the documented error, no session', () => {
  const t = useAuthTestService(OAUTH_ENV);
  const p = useProviders();

  it('a forged state → 400 invalid_grant, no redirect', async () => {
    const project = await oauthProject(t, p);
    const s = await start(t, project, 'test-op');
    const at = await loginAtProvider(s.location, 'forged-state');
    at.searchParams.set('state', 'forged-state-0123456789abcdefghijkl');
    const r = await callback(t, project, at, s.cookie);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('invalid_grant');
    expect(r.location).toBeNull();
    expect(await userExists(t, project, 'forged-state@example.com')).toBe(false);
  });

  it('a replayed state → the second callback 400 invalid_grant (single use)', async () => {
    const project = await oauthProject(t, p);
    const s = await start(t, project, 'test-op');
    const at = await loginAtProvider(s.location, 'replay');
    expect((await callback(t, project, at, s.cookie)).location?.searchParams.get('code')).toBeTruthy();
    const again = await callback(t, project, at, s.cookie);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
  });

  it('a state finished in another browser (without the cookie of the one that started) → 400 invalid_grant', async () => {
    const project = await oauthProject(t, p);
    const s = await start(t, project, 'test-op');
    const at = await loginAtProvider(s.location, 'elsewhere');
    const wrongCookie = `${s.cookie.split('=')[0]}=not-the-binding-value-0123456789`;
    for (const cookie of ['', wrongCookie]) {
      const r = await callback(t, project, at, cookie);
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('invalid_grant');
    }
    expect(await userExists(t, project, 'elsewhere@example.com')).toBe(false);
  });

  it('a callback carrying a code the provider issued to another client → back to the app with error=oauth_failed', async () => {
    const project = await oauthProject(t, p);
    const callbackUrl = `${PUBLIC_URL}/v1/projects/${project}/auth/oauth/callback`;
    await p.op.registerClient({ client_id: `other-${project}`, client_secret: 'other-secret', redirect_uris: [callbackUrl] });
    const s = await start(t, project, 'test-op');
    const ours = new URL(s.location);
    const theirs = new URL(s.location);
    theirs.searchParams.set('client_id', `other-${project}`);
    const at = await loginAtProvider(theirs.href, 'other-client');
    expect(at.searchParams.get('state')).toBe(ours.searchParams.get('state'));
    const r = await callback(t, project, at, s.cookie);
    expect(r.status).toBe(302);
    expect(r.location?.searchParams.get('error')).toBe('oauth_failed');
    expect(r.location?.searchParams.get('code')).toBeNull();
    expect(await userExists(t, project, 'other-client@example.com')).toBe(false);
  });

  for (const claim of ['aud', 'iss', 'nonce', 'exp'] as const) {
    it(`an ID token with a wrong ${claim} (validly signed by the provider) → error=oauth_failed`, async () => {
      const project = await oauthProject(t, p);
      const login = `bad-${claim}`;
      await p.op.tamper(claim);
      try {
        const back = await signInThrough(t, project, 'test-op', login);
        expect(back.searchParams.get('error')).toBe('oauth_failed');
        expect(back.searchParams.get('code')).toBeNull();
      } finally {
        await p.op.tamper(null);
      }
      expect(await userExists(t, project, `${login}@example.com`)).toBe(false);
      // Refused for that claim (openid-client's reason, in the service's log), not for something else.
      const refusal = t.logLines.filter((l) => l.includes('oauth: sign-in refused') && l.includes(project)).pop() ?? '';
      expect(JSON.parse(refusal).claim).toBe(claim);
      // The same sign-in untampered succeeds: only the claim was wrong.
      expect((await signInThrough(t, project, 'test-op', login)).searchParams.get('code')).toBeTruthy();
    });
  }

  it('a redirect target outside the allow-list → 400 invalid_request at the start, nothing stored, no provider', async () => {
    const project = await oauthProject(t, p);
    for (const target of ['https://evil.test/after-sign-in', `${APP}/deeper`, 'http://app.test/after-sign-in#x', 'javascript:alert(1)']) {
      const s = await start(t, project, 'test-op', target);
      expect(s.status).toBe(400);
      expect(s.body).toMatchObject({ error: 'invalid_request', details: { field: 'redirect_to' } });
      expect(s.location).toBe('');
    }
  });

  it('an unverified provider address equal to an existing user\'s → error=account_exists, not linked, no session', async () => {
    const project = await oauthProject(t, p);
    const created = await t.call({ method: 'post', project, path: '/auth/users', key: 'secret', body: { email: 'owner@example.com', password: 'owner password 1', email_verified: true } });
    await p.op.account({ sub: 'attacker', email: 'owner@example.com', email_verified: false });
    const back = await signInThrough(t, project, 'test-op', 'attacker');
    expect(back.searchParams.get('error')).toBe('account_exists');
    expect(back.searchParams.get('code')).toBeNull();
    const user = await t.call({ method: 'get', project, path: `/auth/users/${created.body.user.id}`, key: 'secret' });
    expect(user.body.user.last_sign_in_at).toBeNull();
    const ids = await t.call({ method: 'get', project, path: `/auth/users/${created.body.user.id}/identities`, key: 'secret' });
    expect(ids.body.identities).toEqual([]);
  });

  it('a verified provider address equal to an unverified account\'s → account_exists too (the account may not be the owner\'s)', async () => {
    const project = await oauthProject(t, p);
    await t.call({ method: 'post', project, path: '/auth/signup', body: { email: 'squatted@example.com', password: 'squatter password' } });
    await p.op.account({ sub: 'real-owner', email: 'squatted@example.com', email_verified: true });
    expect((await signInThrough(t, project, 'test-op', 'real-owner')).searchParams.get('error')).toBe('account_exists');
  });

  it('a used exchange code → 400 invalid_grant; an unknown one too', async () => {
    const project = await oauthProject(t, p);
    const back = await signInThrough(t, project, 'test-op', 'once');
    const code = back.searchParams.get('code') ?? '';
    expect((await exchange(t, project, code)).status).toBe(200);
    const again = await exchange(t, project, code);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
    expect(again.body.access_token).toBeUndefined();
    expect((await exchange(t, project, 'x'.repeat(43))).body.error).toBe('invalid_grant');
  });

  it('an exchange code expires after 60 s', async () => {
    const project = await oauthProject(t, p);
    const back = await signInThrough(t, project, 'test-op', 'slow-app');
    t.advance(61_000);
    expect((await exchange(t, project, back.searchParams.get('code') ?? '')).body.error).toBe('invalid_grant');
  });
});
