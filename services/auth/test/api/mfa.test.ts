import { Secret, TOTP } from 'otpauth';
import { useAuthTestService } from './auth-test-service';
import { itLeakedNoSecrets } from './no-secrets';

const PASSWORD = 'two factor password';
const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { [k: string]: unknown };

/** TOTP two-factor sign-in: enrollment, the challenge, codes, recovery codes, limits, unenrollment, the admin's reset. */
describe('Auth API: two-factor sign-in (TOTP)', () => {
  const t = useAuthTestService({ PLINTH_RATE_LIMIT_EMAIL: '10' });
  let p: string;
  beforeEach(async () => {
    p = await t.enabledProject({ send_verification_on_signup: false });
  });

  const codeAt = (secret: string, at = t.now) => TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: at });
  const signIn = (email: string, ip?: string) => t.call({ method: 'post', path: '/auth/signin', project: p, ip, body: { email, password: PASSWORD } });
  const verify = (body: object, ip?: string) => t.call({ method: 'post', path: '/auth/mfa/verify', project: p, ip, body });

  /** A signed-up user with a confirmed TOTP factor: its secret, recovery codes and aal-2 session. */
  async function enrolled(email: string) {
    const up = await t.call({ method: 'post', path: '/auth/signup', project: p, body: { email, password: PASSWORD } });
    const enroll = await t.call({ method: 'post', path: '/auth/mfa/totp/enroll', project: p, userToken: up.body.access_token });
    expect(enroll.status).toBe(200);
    const secret = enroll.body.secret as string;
    const confirm = await t.call({ method: 'post', path: '/auth/mfa/totp/confirm', project: p, userToken: up.body.access_token, body: { code: codeAt(secret) } });
    expect(confirm.status).toBe(200);
    t.advance(30_000); // the confirming code's step is spent
    return { id: up.body.user.id as string, secret, recovery: confirm.body.recovery_codes as string[], session: confirm.body.session };
  }

  it('enrolls: a secret and an otpauth:// URI once, confirmed by a first code; recovery codes shown once; the secret is never answered again', async () => {
    const up = await t.call({ method: 'post', path: '/auth/signup', project: p, body: { email: 'enroll@example.com', password: PASSWORD } });
    const token = up.body.access_token as string;
    expect(claimsOf(token).aal).toBe(1);
    const enroll = await t.call({ method: 'post', path: '/auth/mfa/totp/enroll', project: p, userToken: token });
    expect(enroll.body).toEqual({
      factor: { type: 'totp', status: 'pending', created_at: expect.any(String), confirmed_at: null, recovery_codes_left: 0 },
      secret: expect.stringMatching(/^[A-Z2-7]{32}$/),
      uri: expect.stringMatching(/^otpauth:\/\/totp\/.*enroll%40example\.com\?.*secret=/),
    });
    const secret = enroll.body.secret as string;
    expect(enroll.body.uri).toContain(`secret=${secret}`);
    // Still one factor: a pending enrollment does not gate sign-in.
    expect((await signIn('enroll@example.com')).status).toBe(200);
    const wrongCode = codeAt(secret) === '000000' ? '000001' : '000000';
    const wrong = await t.call({ method: 'post', path: '/auth/mfa/totp/confirm', project: p, userToken: token, body: { code: wrongCode } });
    expect(wrong.status).toBe(403);
    const confirm = await t.call({ method: 'post', path: '/auth/mfa/totp/confirm', project: p, userToken: token, body: { code: codeAt(secret) } });
    expect(confirm.status).toBe(200);
    expect(confirm.body.factor).toMatchObject({ type: 'totp', status: 'active', recovery_codes_left: 10 });
    expect(confirm.body.recovery_codes).toHaveLength(10);
    expect(new Set(confirm.body.recovery_codes).size).toBe(10);
    // The confirming session is replaced by one at aal 2.
    expect(claimsOf(confirm.body.session.access_token).aal).toBe(2);
    expect((await t.call({ method: 'get', path: '/auth/user', project: p, userToken: token })).status).toBe(401);
    const mine = await t.call({ method: 'get', path: '/auth/mfa', project: p, userToken: confirm.body.session.access_token });
    expect(mine.body).toEqual({ factors: [confirm.body.factor] });
    expect(JSON.stringify(mine.body)).not.toContain(secret);
    const again = await t.call({ method: 'post', path: '/auth/mfa/totp/enroll', project: p, userToken: confirm.body.session.access_token });
    expect(again.status).toBe(409);
    expect(JSON.stringify(t.logLines)).not.toContain(secret);
  });

  it('sign-in answers mfa_required with a challenge and no token; the challenge plus a code gives an aal-2 session, once; refresh keeps aal 2', async () => {
    const u = await enrolled('two@example.com');
    const first = await signIn('two@example.com');
    expect(first.status).toBe(401);
    expect(first.body).toEqual({
      error: 'mfa_required',
      message: expect.any(String),
      details: { challenge: expect.stringMatching(/^mfc_/), expires_at: expect.any(String), expires_in: 300, factors: ['totp', 'recovery_code'] },
    });
    const challenge = first.body.details.challenge as string;
    expect(JSON.stringify(first.body)).not.toMatch(/eyJ|frt_/);
    // The challenge is no credential anywhere in Auth.
    expect((await t.call({ method: 'get', path: '/auth/user', project: p, userToken: challenge })).status).toBe(401);
    expect((await t.call({ method: 'get', path: '/auth/mfa', project: p, userToken: challenge })).status).toBe(401);
    expect((await t.call({ method: 'post', path: '/auth/refresh', project: p, body: { refresh_token: challenge } })).status).toBe(401);
    expect((await t.call({ method: 'get', path: '/auth/user', project: p, key: 'none', headers: { authorization: `Bearer ${challenge}` } })).status).toBe(401);

    const ok = await verify({ challenge, code: codeAt(u.secret) });
    expect(ok.status).toBe(200);
    expect(ok.body.user.id).toBe(u.id);
    expect(claimsOf(ok.body.access_token)).toMatchObject({ sub: u.id, aal: 2 });
    expect((await t.call({ method: 'get', path: '/auth/user', project: p, userToken: ok.body.access_token })).status).toBe(200);
    t.advance(30_000);
    const spent = await verify({ challenge, code: codeAt(u.secret) });
    expect(spent.status).toBe(401);
    expect(spent.body.error).toBe('unauthorized');
    const refreshed = await t.call({ method: 'post', path: '/auth/refresh', project: p, body: { refresh_token: ok.body.refresh_token } });
    expect(claimsOf(refreshed.body.access_token).aal).toBe(2);
    // The e-mail code sign-in of a verified account is gated the same way.
    await t.call({ method: 'patch', path: `/auth/users/${u.id}`, project: p, key: 'secret', body: { email_verified: true } });
    await t.call({ method: 'post', path: '/auth/otp/request', project: p, body: { email: 'two@example.com' } });
    const otp = await t.lastMail(p, 'two@example.com', 'otp');
    const redeemed = await t.call({ method: 'post', path: '/auth/otp/redeem', project: p, body: { email: 'two@example.com', code: (otp.data as { code: string }).code } });
    expect(redeemed.status).toBe(401);
    expect(redeemed.body.error).toBe('mfa_required');
  });

  it('a TOTP code cannot be replayed: the same code on a new challenge is refused; the next step\'s code works', async () => {
    const u = await enrolled('replay@example.com');
    const code = codeAt(u.secret);
    const c1 = (await signIn('replay@example.com')).body.details.challenge;
    expect((await verify({ challenge: c1, code })).status).toBe(200);
    const c2 = (await signIn('replay@example.com')).body.details.challenge;
    const replay = await verify({ challenge: c2, code });
    expect(replay.status).toBe(401);
    t.advance(10_000); // still within the code's window
    expect((await verify({ challenge: c2, code })).status).toBe(401);
    t.advance(30_000);
    expect((await verify({ challenge: c2, code: codeAt(u.secret) })).status).toBe(200);
  });

  it('a recovery code works once; the count of the rest goes down', async () => {
    const u = await enrolled('recover@example.com');
    const c1 = (await signIn('recover@example.com')).body.details.challenge;
    const ok = await verify({ challenge: c1, recovery_code: u.recovery[3] });
    expect(ok.status).toBe(200);
    expect(claimsOf(ok.body.access_token).aal).toBe(2);
    const c2 = (await signIn('recover@example.com')).body.details.challenge;
    expect((await verify({ challenge: c2, recovery_code: u.recovery[3] })).status).toBe(401);
    expect((await verify({ challenge: c2, recovery_code: u.recovery[4]!.toUpperCase() })).status).toBe(200);
    const mine = await t.call({ method: 'get', path: '/auth/mfa', project: p, userToken: ok.body.access_token });
    expect(mine.body.factors[0].recovery_codes_left).toBe(8);
  });

  it('wrong codes: 5 per (client address, user) per 5 minutes, then 429 right code or not; another address still signs in', async () => {
    const u = await enrolled('guess@example.com');
    const challenge = (await signIn('guess@example.com')).body.details.challenge;
    const right = codeAt(u.secret);
    const wrong = right === '000000' ? '000001' : '000000';
    for (let i = 0; i < 5; i++) expect((await verify({ challenge, code: wrong }, '198.51.100.9')).status).toBe(401);
    const limited = await verify({ challenge, code: right }, '198.51.100.9');
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe('rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // A new challenge does not reset the address's budget.
    const fresh = (await signIn('guess@example.com', '198.51.100.9')).body.details.challenge;
    expect((await verify({ challenge: fresh, code: right }, '198.51.100.9')).status).toBe(429);
    expect((await verify({ challenge, code: right }, '203.0.113.50')).status).toBe(200);
  });

  it('a challenge dies after 10 codes from any addresses, and after 5 minutes', async () => {
    const u = await enrolled('dies@example.com');
    const challenge = (await signIn('dies@example.com')).body.details.challenge;
    const wrong = codeAt(u.secret) === '000000' ? '000001' : '000000';
    for (let i = 0; i < 10; i++) expect((await verify({ challenge, code: wrong }, `198.51.100.${100 + i}`)).status).toBe(401);
    expect((await verify({ challenge, code: codeAt(u.secret) }, '198.51.100.200')).status).toBe(401);
    const late = (await signIn('dies@example.com')).body.details.challenge;
    t.advance(5 * 60_000);
    expect((await verify({ challenge: late, code: codeAt(u.secret) })).status).toBe(401);
  });

  it('unenroll needs a current code: none → 400, wrong → 403, right → off, and sign-in gives a session at once', async () => {
    const u = await enrolled('off@example.com');
    const token = u.session.access_token as string;
    const del = (body: object) => t.call({ method: 'delete', path: '/auth/mfa/totp', project: p, userToken: token, body });
    expect((await del({})).status).toBe(400);
    const wrong = codeAt(u.secret) === '000000' ? '000001' : '000000';
    expect((await del({ code: wrong })).status).toBe(403);
    expect((await signIn('off@example.com')).status).toBe(401);
    const off = await del({ code: codeAt(u.secret) });
    expect(off.status).toBe(200);
    expect(off.body).toEqual({ unenrolled: true });
    const s = await signIn('off@example.com');
    expect(s.status).toBe(200);
    expect(claimsOf(s.body.access_token).aal).toBe(1);
    expect((await del({ code: codeAt(u.secret) })).status).toBe(404);
  });

  it('enrollment needs recent proof and an address', async () => {
    const up = await t.call({ method: 'post', path: '/auth/signup', project: p, body: { email: 'stale@example.com', password: PASSWORD } });
    t.advance(601_000);
    const stale = await t.call({ method: 'post', path: '/auth/mfa/totp/enroll', project: p, userToken: up.body.access_token });
    expect(stale.status).toBe(403);
    expect(stale.body.error).toBe('reauthentication_required');
    await t.configure(p, { allow_anonymous: true });
    const anon = await t.call({ method: 'post', path: '/auth/anonymous', project: p, body: {} });
    expect((await t.call({ method: 'post', path: '/auth/mfa/totp/enroll', project: p, userToken: anon.body.access_token })).status).toBe(400);
  });

  it('the admin sees a user\'s factors and resets them (secret key only); deleting the user deletes them', async () => {
    const u = await enrolled('admin-reset@example.com');
    const seen = await t.call({ method: 'get', path: `/auth/users/${u.id}/mfa`, project: p, key: 'secret' });
    expect(seen.body).toEqual({ factors: [expect.objectContaining({ type: 'totp', status: 'active', recovery_codes_left: 10 })] });
    expect((await t.call({ method: 'get', path: `/auth/users/${u.id}/mfa`, project: p })).status).toBe(403);
    expect((await t.call({ method: 'delete', path: `/auth/users/${u.id}/mfa`, project: p })).status).toBe(403);
    expect((await t.call({ method: 'get', path: '/auth/users/usr_nobody/mfa', project: p, key: 'secret' })).status).toBe(404);
    const reset = await t.call({ method: 'delete', path: `/auth/users/${u.id}/mfa`, project: p, key: 'secret' });
    expect(reset.body).toEqual({ reset: true });
    expect((await signIn('admin-reset@example.com')).status).toBe(200);

    const v = await enrolled('admin-delete@example.com');
    expect((await t.call({ method: 'delete', path: `/auth/users/${v.id}`, project: p, key: 'secret' })).status).toBe(200);
    expect((await t.call({ method: 'get', path: `/auth/users/${v.id}/mfa`, project: p, key: 'secret' })).status).toBe(404);
  });

  it('no pre-hijacking: a factor set up on an unverified account goes when the address\'s owner redeems a code or resets the password; a verified account keeps it', async () => {
    const byCode = await enrolled('owner-code@example.com');
    await t.call({ method: 'post', path: '/auth/otp/request', project: p, body: { email: 'owner-code@example.com' } });
    const otp = (await t.lastMail(p, 'owner-code@example.com', 'otp')).data as { code: string };
    const owner = await t.call({ method: 'post', path: '/auth/otp/redeem', project: p, body: { email: 'owner-code@example.com', code: otp.code } });
    expect(owner.status).toBe(200);
    expect((await t.call({ method: 'get', path: `/auth/users/${byCode.id}/mfa`, project: p, key: 'secret' })).body).toEqual({ factors: [] });

    const reset = async (email: string) => {
      await t.call({ method: 'post', path: '/auth/password/forgot', project: p, body: { email } });
      const { token } = (await t.lastMail(p, email, 'reset')).data as { token: string };
      expect((await t.call({ method: 'post', path: '/auth/password/reset', project: p, body: { token, password: PASSWORD } })).status).toBe(200);
    };
    await enrolled('owner-reset@example.com');
    await reset('owner-reset@example.com');
    expect((await signIn('owner-reset@example.com')).status).toBe(200);
    // Verified now, with a factor of the owner's own: a reset link alone does not pass it.
    const own = await signIn('owner-reset@example.com');
    const enroll = await t.call({ method: 'post', path: '/auth/mfa/totp/enroll', project: p, userToken: own.body.access_token });
    await t.call({ method: 'post', path: '/auth/mfa/totp/confirm', project: p, userToken: own.body.access_token, body: { code: codeAt(enroll.body.secret) } });
    t.advance(61_000); // the reset mail throttle
    await reset('owner-reset@example.com');
    expect((await signIn('owner-reset@example.com')).body.error).toBe('mfa_required');
  });

  itLeakedNoSecrets(t);
});
