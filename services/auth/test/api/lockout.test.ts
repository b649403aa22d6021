import { TEST_REDIS_URL } from '../redis-keys';
import { useAuthTestService } from './auth-test-service';
import { itLeakedNoSecrets } from './no-secrets';

const PASSWORD = 'the real password';
const LIMITS = { PLINTH_RATE_LIMIT_IP: '1000', PLINTH_RATE_LIMIT_EMAIL: '3' };

describe.each([
  ['in-memory store', {} as { [k: string]: string }],
  ['Redis store (real server)', { REDIS_URL: TEST_REDIS_URL }],
])('Auth API: no lockout by a third party (%s)', (_name, env) => {
  const t = useAuthTestService({ ...LIMITS, ...env });
  let p: string;
  beforeEach(async () => {
    p = await t.enabledProject({ send_verification_on_signup: false });
    await t.call({ method: 'post', path: '/auth/signup', project: p, ip: '192.0.2.1', body: { email: 'ada@example.com', password: PASSWORD } });
  });

  const signIn = (password: string, ip: string) =>
    t.call({ method: 'post', path: '/auth/signin', project: p, ip, body: { email: 'ada@example.com', password } });

  it('the correct password signs in while an attacker burns the per-e-mail failure budget; wrong guesses get 429', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await signIn(`guess number ${i}`, `198.51.100.${i + 1}`)).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429, 429, 429, 429]);
    const owner = await signIn(PASSWORD, '203.0.113.99');
    expect(owner.status).toBe(200);
    expect(owner.body.refresh_token).toMatch(/^frt_/);
    const guess = await signIn('yet another guess', '198.51.100.77');
    expect(guess.status).toBe(429);
    expect(Number(guess.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('successful sign-ins do not count toward the per-e-mail limit', async () => {
    for (let i = 0; i < 6; i++) expect((await signIn(PASSWORD, '203.0.113.5')).status).toBe(200);
    expect((await signIn('one wrong guess', '203.0.113.5')).status).toBe(401);
  });

  it('a burnt sign-in budget leaves requesting a code and a reset mail untouched', async () => {
    for (let i = 0; i < 5; i++) await signIn(`guess ${i}`, '198.51.100.9');
    expect((await t.call({ method: 'post', path: '/auth/otp/request', project: p, body: { email: 'ada@example.com' } })).status).toBe(200);
    expect((await t.call({ method: 'post', path: '/auth/password/forgot', project: p, body: { email: 'ada@example.com' } })).status).toBe(200);
    const kinds = (await t.mails(p, 'ada@example.com')).map((j) => j.kind).sort();
    expect(kinds).toEqual(['otp', 'reset']);
  });

  itLeakedNoSecrets(t);
});

describe('Auth API: the per-IP sign-in limit still applies to correct passwords', () => {
  const t = useAuthTestService({ PLINTH_RATE_LIMIT_IP: '3', PLINTH_RATE_LIMIT_EMAIL: '1000' });
  it('the 4th sign-in from one IP answers 429 even with the right password', async () => {
    const p = await t.enabledProject({ send_verification_on_signup: false });
    await t.call({ method: 'post', path: '/auth/signup', project: p, ip: '192.0.2.1', body: { email: 'ada@example.com', password: PASSWORD } });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      statuses.push((await t.call({ method: 'post', path: '/auth/signin', project: p, ip: '198.51.100.3', body: { email: 'ada@example.com', password: PASSWORD } })).status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
  });
});
