import { useAuthTestService } from './auth-test-service';
import { itLeakedNoSecrets } from './no-secrets';

const VICTIM = 'victim@example.com';
const ATTACKER_PASSWORD = 'attacker chose this';
const NEW_PASSWORD = 'the owner chose this';

/** Defects found by trying the API as an attacker: each test failed before its fix. */
describe('Auth API: account takeover defects', () => {
  const t = useAuthTestService();
  let p: string;
  beforeEach(async () => {
    p = await t.enabledProject({ send_verification_on_signup: false });
  });

  const post = (path: string, body: object, userToken?: string) => t.call({ method: 'post', path, project: p, body, userToken });
  const signIn = (email: string, password: string) => post('/auth/signin', { email, password });
  const me = (token: string) => t.call({ method: 'get', path: '/auth/user', project: p, userToken: token });
  const tokenOf = async (to: string, kind: 'verify' | 'reset') => ((await t.lastMail(p, to, kind)).data as { token: string }).token;
  const codeOf = async (to: string) => ((await t.lastMail(p, to, 'otp')).data as { code: string }).code;

  it('pre-hijacking: an OTP redeem on an unverified account clears the password set before and ends its sessions', async () => {
    const attacker = await post('/auth/signup', { email: VICTIM, password: ATTACKER_PASSWORD });
    expect(attacker.status).toBe(201);
    expect((await me(attacker.body.access_token)).status).toBe(200);

    await post('/auth/otp/request', { email: VICTIM });
    const victim = await post('/auth/otp/redeem', { email: VICTIM, code: await codeOf(VICTIM) });
    expect(victim.status).toBe(200);
    expect(victim.body.user).toMatchObject({ email_verified: true, has_password: false });

    expect((await signIn(VICTIM, ATTACKER_PASSWORD)).status).toBe(401);
    expect((await me(attacker.body.access_token)).status).toBe(401);
    expect((await post('/auth/refresh', { refresh_token: attacker.body.refresh_token })).status).toBe(401);
    expect((await me(victim.body.access_token)).status).toBe(200);
  });

  it('an OTP redeem on a verified account keeps its password and sessions', async () => {
    const owner = await post('/auth/signup', { email: VICTIM, password: NEW_PASSWORD });
    await t.call({ method: 'patch', path: `/auth/users/${owner.body.user.id}`, key: 'secret', project: p, body: { email_verified: true } });
    await post('/auth/otp/request', { email: VICTIM });
    expect((await post('/auth/otp/redeem', { email: VICTIM, code: await codeOf(VICTIM) })).status).toBe(200);
    expect((await signIn(VICTIM, NEW_PASSWORD)).status).toBe(200);
    expect((await me(owner.body.access_token)).status).toBe(200);
  });

  it('a reset ends every other outstanding reset link and the live sign-in code', async () => {
    await post('/auth/signup', { email: VICTIM, password: ATTACKER_PASSWORD });
    await post('/auth/password/forgot', { email: VICTIM });
    const older = await tokenOf(VICTIM, 'reset');
    t.advance(61_000);
    await post('/auth/password/forgot', { email: VICTIM });
    const newer = await tokenOf(VICTIM, 'reset');
    expect(newer).not.toBe(older);
    await post('/auth/otp/request', { email: VICTIM });
    const code = await codeOf(VICTIM);

    expect((await post('/auth/password/reset', { token: newer, password: NEW_PASSWORD })).status).toBe(200);
    const stale = await post('/auth/password/reset', { token: older, password: 'another new password' });
    expect(stale.status).toBe(400);
    expect(stale.body.error).toBe('invalid_request');
    expect((await post('/auth/otp/redeem', { email: VICTIM, code })).status).toBe(401);
    expect((await signIn(VICTIM, NEW_PASSWORD)).status).toBe(200);
  });

  it('a 73-byte password: sign-in answers the usual 401 even though its first 72 bytes match; setting one answers 400', async () => {
    const pw72 = 'p'.repeat(72);
    expect((await post('/auth/signup', { email: VICTIM, password: pw72 })).status).toBe(201);
    const wrong = await signIn(VICTIM, 'wrong password');
    const long = await signIn(VICTIM, `${pw72}X`);
    expect(long.status).toBe(401);
    expect(long.body).toEqual(wrong.body);
    expect((await signIn(VICTIM, pw72)).status).toBe(200);

    const pw73 = `${'é'.repeat(36)}x`; // 36 two-byte characters + 1: 73 bytes in 37 characters
    const set = await post('/auth/signup', { email: 'other@example.com', password: pw73 });
    expect(set.status).toBe(400);
    expect(set.body.details.fields).toEqual([{ field: 'password', message: 'must be at most 72 bytes' }]);
    await post('/auth/password/forgot', { email: VICTIM });
    const reset = await post('/auth/password/reset', { token: await tokenOf(VICTIM, 'reset'), password: pw73 });
    expect(reset.status).toBe(400);
    const admin = await t.call({ method: 'post', path: '/auth/users', key: 'secret', project: p, body: { email: 'x@example.com', password: pw73 } });
    expect(admin.status).toBe(400);
  });

  it('e-mails are normalised: NFC and NFD spellings, upper-case and Unicode domains are one account', async () => {
    const nfc = 'jos\u00e9@b\u00fccher.example';
    const nfd = 'jose\u0301@BU\u0308CHER.example';
    const first = await post('/auth/signup', { email: nfc, password: NEW_PASSWORD });
    expect(first.status).toBe(201);
    expect(first.body.user.email).toBe('jos\u00e9@xn--bcher-kva.example');
    const dup = await post('/auth/signup', { email: nfd, password: NEW_PASSWORD });
    expect(dup.status).toBe(409);
    const puny = await post('/auth/signup', { email: 'JOS\u00c9@xn--bcher-kva.example', password: NEW_PASSWORD });
    expect(puny.status).toBe(409);
    expect((await signIn(nfd, NEW_PASSWORD)).status).toBe(200);
  });

  it('verify/request sends at most one mail per user per 60 s and always answers {sent:true}', async () => {
    const s = await post('/auth/signup', { email: VICTIM, password: NEW_PASSWORD });
    const verifyMails = async () => (await t.mails(p, VICTIM)).filter((j) => j.kind === 'verify');
    for (let i = 0; i < 5; i++) {
      const r = await post('/auth/verify/request', {}, s.body.access_token);
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ sent: true });
    }
    expect(await verifyMails()).toHaveLength(1);
    t.advance(60_000);
    await post('/auth/verify/request', {}, s.body.access_token);
    expect(await verifyMails()).toHaveLength(2);
  });

  it('password/forgot sends at most one reset mail per user per 60 s and always answers {sent:true}', async () => {
    await post('/auth/signup', { email: VICTIM, password: NEW_PASSWORD });
    for (let i = 0; i < 4; i++) expect((await post('/auth/password/forgot', { email: VICTIM })).body).toEqual({ sent: true });
    expect((await t.mails(p, VICTIM)).filter((j) => j.kind === 'reset')).toHaveLength(1);
  });

  it('a validation error never echoes the password back', async () => {
    const secret = 'short';
    const r = await post('/auth/signup', { email: 'not an email', password: secret });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).not.toContain(secret);
    const r2 = await post('/auth/signup', { email: VICTIM, password: { nested: 'object password value' } });
    expect(r2.status).toBe(400);
    expect(JSON.stringify(r2.body)).not.toContain('object password value');
  });

  itLeakedNoSecrets(t);
});
