import { TEST_REDIS_URL } from '../redis-keys';
import { useAuthTestService } from './auth-test-service';
import { itLeakedNoSecrets } from './no-secrets';

const PASSWORD = 'rate limit password';
const LIMITS = { PLINTH_RATE_LIMIT_IP: '3', PLINTH_RATE_LIMIT_EMAIL: '2' };

describe.each([
  ['in-memory store', {} as { [k: string]: string }],
  ['Redis store (real server)', { REDIS_URL: TEST_REDIS_URL }],
])('Auth API: rate limits (%s)', (_name, env) => {
  const t = useAuthTestService({ ...LIMITS, ...env });
  let p: string;
  beforeEach(async () => {
    p = await t.enabledProject();
  });

  const signIn = (email: string, ip: string) =>
    t.call({ method: 'post', path: '/auth/signin', project: p, ip, body: { email, password: PASSWORD } });

  it('the 4th sign-in from one IP in 5 minutes answers 429 with Retry-After; another IP is unaffected', async () => {
    for (let i = 0; i < 3; i++) expect((await signIn(`u${i}@example.com`, '198.51.100.1')).status).toBe(401);
    const r = await signIn('u9@example.com', '198.51.100.1');
    expect(r.status).toBe(429);
    expect(r.body).toEqual({ error: 'rate_limited', message: expect.any(String), details: { retry_after: expect.any(Number) } });
    const retry = Number(r.headers['retry-after']);
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(300);
    expect((await signIn('u9@example.com', '198.51.100.2')).status).toBe(401);
  });

  it('the 3rd sign-in for one e-mail answers 429 whatever the IP', async () => {
    expect((await signIn('target@example.com', '198.51.100.11')).status).toBe(401);
    expect((await signIn('TARGET@example.com', '198.51.100.12')).status).toBe(401);
    const r = await signIn('target@example.com', '198.51.100.13');
    expect(r.status).toBe(429);
    expect(r.headers['retry-after']).toBeDefined();
  });

  it('/auth/signup is limited per e-mail too', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await t.call({ method: 'post', path: '/auth/signup', project: p, ip: `198.51.100.${20 + i}`, body: { email: 'same@example.com', password: PASSWORD } });
      statuses.push(r.status);
    }
    expect(statuses[2]).toBe(429);
    expect(statuses.slice(0, 2)).not.toContain(429);
  });

  it.each([['/auth/otp/request'], ['/auth/password/forgot']])(
    '%s is limited per (address, e-mail): the 3rd from one address is 429, other addresses still get {sent:true}',
    async (path) => {
      const ask = (ip: string) => t.call({ method: 'post', path, project: p, ip, body: { email: 'same@example.com' } });
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await ask('198.51.100.30')).status);
      expect(statuses).toEqual([200, 200, 429]);
      for (let i = 0; i < 3; i++) {
        const r = await ask(`198.51.100.${31 + i}`);
        expect(r.status).toBe(200);
        expect(r.body).toEqual({ sent: true });
      }
    },
  );

  it('refresh allows 5× the IP limit', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 16; i++) {
      const r = await t.call({ method: 'post', path: '/auth/refresh', project: p, ip: '198.51.100.50', body: { refresh_token: 'frt_nope' } });
      statuses.push(r.status);
    }
    expect(statuses.slice(0, 15)).toEqual(Array(15).fill(401));
    expect(statuses[15]).toBe(429);
  });

  it('limits are per project', async () => {
    for (let i = 0; i < 3; i++) await signIn(`v${i}@example.com`, '198.51.100.60');
    expect((await signIn('v9@example.com', '198.51.100.60')).status).toBe(429);
    const q = await t.enabledProject();
    const r = await t.call({ method: 'post', path: '/auth/signin', project: q, ip: '198.51.100.60', body: { email: 'v9@example.com', password: PASSWORD } });
    expect(r.status).toBe(401);
  });

  itLeakedNoSecrets(t);
});
