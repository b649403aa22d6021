import { Secret, TOTP } from 'otpauth';
import { MfaRequiredError } from '../src';
import { startSdkFixture, type SdkFixture } from './fixture';

const PASSWORD = 'sdk two factor password';
/** The code of the time step `ahead` steps from now (the server runs on the wall clock). */
const code = (secret: string, ahead = 0) => TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: Date.now() + ahead * 30_000 });
const aalOf = (token: string) => (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { aal?: number }).aal;

/** Two-factor sign-in through the SDK, against a real standalone Plinth. */
describe('@plinth/client two-factor sign-in', () => {
  let f: SdkFixture;
  const client = (opts: Parameters<SdkFixture['client']>[0] = {}) => f.client(opts);

  beforeAll(async () => {
    f = await startSdkFixture({ send_verification_on_signup: false });
  });
  afterAll(async () => {
    await f.close();
  });

  it('enroll and confirm store an aal-2 session; signIn then throws MfaRequiredError and stores nothing; mfa.verify completes it', async () => {
    const c = client();
    await c.auth.signUp({ email: 'sdk-mfa@example.com', password: PASSWORD });
    const enrollment = await c.auth.mfa.enroll();
    expect(enrollment.uri).toMatch(/^otpauth:\/\/totp\//);
    const confirmed = await c.auth.mfa.confirm(code(enrollment.secret));
    expect(confirmed.recoveryCodes).toHaveLength(10);
    expect(aalOf((await c.auth.accessToken())!)).toBe(2);
    expect(await c.auth.mfa.factors()).toEqual([expect.objectContaining({ type: 'totp', status: 'active', recovery_codes_left: 10 })]);

    const other = client();
    const err = await other.auth.signIn('sdk-mfa@example.com', PASSWORD).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MfaRequiredError);
    expect(err).toMatchObject({ status: 401, code: 'mfa_required', challenge: expect.stringMatching(/^mfc_/) });
    expect(await other.auth.session()).toBeNull();
    await expect(other.auth.mfa.verify('000000' === code(enrollment.secret, 1) ? '000001' : '000000')).rejects.toMatchObject({ status: 401 });
    const session = await other.auth.mfa.verify(code(enrollment.secret, 1));
    expect(aalOf(session.access_token)).toBe(2);
    expect((await other.auth.user())?.email).toBe('sdk-mfa@example.com');

    // A recovery code, with the challenge passed explicitly; then unenroll with another one.
    const third = client();
    const again = (await third.auth.signIn('sdk-mfa@example.com', PASSWORD).catch((e: unknown) => e)) as MfaRequiredError;
    await third.auth.mfa.verify({ recoveryCode: confirmed.recoveryCodes[0]! }, { challenge: again.challenge });
    await expect(third.auth.mfa.unenroll()).rejects.toMatchObject({ status: 400 });
    await third.auth.mfa.unenroll({ recoveryCode: confirmed.recoveryCodes[1]! });
    expect(await third.auth.mfa.factors()).toEqual([]);
    const plain = await client().auth.signIn('sdk-mfa@example.com', PASSWORD);
    expect(aalOf(plain.access_token)).toBe(1);
  });

  it('the admin client lists a user\'s factors and resets them', async () => {
    const c = client();
    const up = await c.auth.signUp({ email: 'sdk-mfa-admin@example.com', password: PASSWORD });
    await c.auth.mfa.confirm(code((await c.auth.mfa.enroll()).secret));
    expect(await f.admin.users.factors(up.user.id)).toEqual([expect.objectContaining({ status: 'active', recovery_codes_left: 10 })]);
    await expect(client().auth.signIn('sdk-mfa-admin@example.com', PASSWORD)).rejects.toBeInstanceOf(MfaRequiredError);
    await f.admin.users.resetFactors(up.user.id);
    expect(await f.admin.users.factors(up.user.id)).toEqual([]);
    expect((await client().auth.signIn('sdk-mfa-admin@example.com', PASSWORD)).user.id).toBe(up.user.id);
  });
});
