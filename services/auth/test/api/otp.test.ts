import { useAuthTestService } from './auth-test-service';
import { itLeakedNoSecrets } from './no-secrets';

const PASSWORD = 'otp suite password';
const MIN = 60_000;

describe('Auth API: one-time codes', () => {
  const t = useAuthTestService();
  let p: string;
  beforeEach(async () => {
    p = await t.enabledProject();
    await t.call({ method: 'post', path: '/auth/signup', project: p, body: { email: 'ada@example.com', password: PASSWORD } });
  });

  const requestCode = (email: string, project = p) =>
    t.call({ method: 'post', path: '/auth/otp/request', project, body: { email } });
  const redeem = (email: string, code: string, project = p) =>
    t.call({ method: 'post', path: '/auth/otp/redeem', project, body: { email, code } });
  async function codeFor(email: string, project = p): Promise<string> {
    const job = await t.lastMail(project, email, 'otp');
    return (job.data as { code: string }).code;
  }
  const otpMails = async (email: string, project = p) => (await t.mails(project, email)).filter((j) => j.kind === 'otp');

  it('request answers {sent:true} and enqueues a 6-digit code; redeem answers a session and verifies the e-mail', async () => {
    const r = await requestCode('ADA@example.com');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ sent: true });
    const code = await codeFor('ada@example.com');
    expect(code).toMatch(/^\d{6}$/);
    const s = await redeem('ada@example.com', code);
    expect(s.status).toBe(200);
    expect(s.body.user.email_verified).toBe(true);
    expect(s.body.refresh_token).toMatch(/^frt_/);
    expect((await t.call({ method: 'get', path: '/auth/user', project: p, userToken: s.body.access_token })).body.user.email_verified).toBe(true);
  });

  it('a code is single use', async () => {
    await requestCode('ada@example.com');
    const code = await codeFor('ada@example.com');
    expect((await redeem('ada@example.com', code)).status).toBe(200);
    expect((await redeem('ada@example.com', code)).status).toBe(401);
  });

  it('for an unknown e-mail (without otp_creates_users) it still answers {sent:true} but sends nothing', async () => {
    const r = await requestCode('ghost@example.com');
    expect(r.body).toEqual({ sent: true });
    expect(await t.mails(p, 'ghost@example.com')).toEqual([]);
  });

  it('a disabled user gets {sent:true} and no code', async () => {
    const list = await t.call({ method: 'get', path: '/auth/users', key: 'secret', project: p });
    await t.call({ method: 'patch', path: `/auth/users/${list.body.users[0].id}`, key: 'secret', project: p, body: { status: 'disabled' } });
    expect((await requestCode('ada@example.com')).body).toEqual({ sent: true });
    expect(await otpMails('ada@example.com')).toEqual([]);
  });

  it('sends at most one code per e-mail per 60 s; later requests still answer {sent:true}', async () => {
    await requestCode('ada@example.com');
    t.advance(59_000);
    expect((await requestCode('ada@example.com')).body).toEqual({ sent: true });
    expect(await otpMails('ada@example.com')).toHaveLength(1);
    t.advance(1_000);
    await requestCode('ada@example.com');
    expect(await otpMails('ada@example.com')).toHaveLength(2);
  });

  it('one live code per e-mail: a new code replaces the old one', async () => {
    await requestCode('ada@example.com');
    const first = await codeFor('ada@example.com');
    t.advance(MIN);
    await requestCode('ada@example.com');
    const second = await codeFor('ada@example.com');
    expect((await redeem('ada@example.com', first)).status).toBe(401); // equal codes: one chance in a million
    expect((await redeem('ada@example.com', second)).status).toBe(200);
  });

  it('after 5 wrong codes from one address even the right code from there is refused (429); from another address it works', async () => {
    await requestCode('ada@example.com');
    const code = await codeFor('ada@example.com');
    const wrong = code === '000000' ? '111111' : '000000';
    const from = (c: string, ip: string) => t.call({ method: 'post', path: '/auth/otp/redeem', project: p, ip, body: { email: 'ada@example.com', code: c } });
    for (let i = 0; i < 5; i++) {
      const r = await from(wrong, '198.51.100.40');
      expect(r.status).toBe(401);
      expect(r.body.error).toBe('unauthorized');
    }
    const refused = await from(code, '198.51.100.40');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect((await from(code, '198.51.100.41')).status).toBe(200);
  });

  it('the fifth attempt may still be the right one', async () => {
    await requestCode('ada@example.com');
    const code = await codeFor('ada@example.com');
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 4; i++) await redeem('ada@example.com', wrong);
    expect((await redeem('ada@example.com', code)).status).toBe(200);
  });

  it('a code expires after 10 minutes', async () => {
    await requestCode('ada@example.com');
    const code = await codeFor('ada@example.com');
    t.advance(10 * MIN);
    expect((await redeem('ada@example.com', code)).status).toBe(401);
  });

  it('a code just under 10 minutes old still works', async () => {
    await requestCode('ada@example.com');
    const code = await codeFor('ada@example.com');
    t.advance(10 * MIN - 1000);
    expect((await redeem('ada@example.com', code)).status).toBe(200);
  });

  it('a malformed code answers 400 naming the field', async () => {
    const r = await redeem('ada@example.com', '12ab');
    expect(r.status).toBe(400);
    expect(r.body.details.fields).toContainEqual({ field: 'code', message: 'must be 6 digits' });
  });

  it('with otp_creates_users an unknown e-mail gets a verified, password-less user', async () => {
    const q = await t.enabledProject({ otp_creates_users: true });
    expect((await requestCode('new@example.com', q)).body).toEqual({ sent: true });
    const s = await redeem('new@example.com', await codeFor('new@example.com', q), q);
    expect(s.status).toBe(200);
    expect(s.body.user).toMatchObject({ email: 'new@example.com', email_verified: true, has_password: false });
    const list = await t.call({ method: 'get', path: '/auth/users', key: 'secret', project: q });
    expect(list.body.total).toBe(1);
  });

  itLeakedNoSecrets(t);
});
