/**
 * Rate limits of the record and collection endpoints (docs/records.md, "Limits"), through the
 * real gateway in both topologies (in the cluster topology two records replicas share the
 * counters in Redis). They fit callers, not keys: anonymous public-key traffic per client
 * address and under a project ceiling of its own, signed-in traffic per user, secret-key
 * traffic per key; the public-key ceiling is the backstop anonymous traffic cannot exhaust.
 * The gateway trusts one proxy here (PLINTH_TRUST_PROXY=1), so X-Forwarded-For names the
 * client's address.
 */
import request from 'supertest';
import { startTestPlinth, type TestPlinth, type TestProject } from '@plinth/testing/harness';

const PER_PUBLIC_KEY = 12;
const PER_ANONYMOUS = 6;
const PER_ADDRESS = 3;
const PER_USER = 4;
const PER_SECRET_KEY = 5;

let t: TestPlinth;

beforeAll(async () => {
  t = await startTestPlinth({
    env: {
      PLINTH_TRUST_PROXY: '1',
      PLINTH_RATE_LIMIT_PUBLIC_KEY: String(PER_PUBLIC_KEY),
      PLINTH_RATE_LIMIT_ANONYMOUS: String(PER_ANONYMOUS),
      PLINTH_RATE_LIMIT_ADDRESS: String(PER_ADDRESS),
      PLINTH_RATE_LIMIT_USER: String(PER_USER),
      PLINTH_RATE_LIMIT_SECRET_KEY: String(PER_SECRET_KEY),
    },
  });
});
afterAll(() => t.close());

// Fresh project ids: rate-limit counters live in the shared Redis in the cluster topology.
let n = 0;
const freshProject = (): Promise<TestProject> => t.createProject(`rl-${process.pid}-${++n}-${Date.now().toString(36)}`);

interface Caller {
  address?: string;
  token?: string;
  key?: string;
  headers?: Record<string, string>;
}

const get = (p: TestProject, path: string, c: Caller = {}) => {
  let r = request(t.app).get(`/v1/projects/${p.id}${path}`).set('Authorization', `Bearer ${c.key ?? p.publicKey}`);
  if (c.address) r = r.set('X-Forwarded-For', c.address);
  if (c.token) r = r.set('X-Db-User-Token', c.token);
  for (const [k, v] of Object.entries(c.headers ?? {})) r = r.set(k, v);
  return r;
};

async function statuses(times: number, send: (i: number) => Promise<{ status: number }>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < times; i++) out.push((await send(i)).status);
  return out;
}

/** A project with a `notes` collection any signed-in user may read, and a token maker. */
async function projectWithNotes(): Promise<{ p: TestProject; token: (uid: string) => Promise<string> }> {
  const p = await freshProject();
  const secret = (path: string) => request(t.app).post(`/v1/projects/${p.id}${path}`).set('Authorization', `Bearer ${p.secretKey}`);
  await secret('/collections').send({ name: 'notes', fields: { body: { type: 'text' } }, rules: { read: 'auth != null' } }).expect(201);
  const token = async (uid: string): Promise<string> => (await secret('/auth/tokens').send({ user_id: uid }).expect(200)).body.access_token;
  return { p, token };
}

const fill = (count: number, status: number): number[] => Array<number>(count).fill(status);

describe('anonymous traffic is limited per client address', () => {
  it(`a flood from one address at 10× its limit: that address 429 after ${PER_ADDRESS}; other addresses and signed-in users see no 429`, async () => {
    const { p, token } = await projectWithNotes();
    const [u1, u2] = [await token('u1'), await token('u2')];
    const flood = await statuses(PER_ADDRESS * 10, (i) =>
      // A client's own X-Plinth-Client-Address is no way out: the gateway sets it.
      get(p, '/collections', { address: '203.0.113.7', headers: { 'X-Plinth-Client-Address': `198.51.100.${i}` } }),
    );
    expect(flood).toEqual([...fill(PER_ADDRESS, 200), ...fill(PER_ADDRESS * 9, 429)]);

    const limited = await get(p, '/collections', { address: '203.0.113.7' });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: 'rate_limited', message: expect.any(String), details: { retry_after: expect.any(Number) } });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(limited.headers['ratelimit-policy']).toBe(`${PER_ADDRESS};w=60`);

    const other = await get(p, '/collections', { address: '203.0.113.8' });
    expect(other.status).toBe(200);
    // The IETF draft-7 headers: the tightest policy that applies, and what is left of it.
    expect(other.headers['ratelimit-policy']).toBe(`${PER_ADDRESS};w=60`);
    expect(other.headers['ratelimit']).toMatch(new RegExp(`^limit=${PER_ADDRESS}, remaining=${PER_ADDRESS - 1}, reset=\\d+$`));

    // Signed-in users of the project, from the flooding address itself too.
    for (const tok of [u1, u2]) {
      expect(await statuses(PER_USER, () => get(p, '/collections/notes/records', { address: '203.0.113.7', token: tok }))).toEqual(
        fill(PER_USER, 200),
      );
    }
  });

  it('a user token that is refused counts as anonymous: the address is limited all the same', async () => {
    const { p } = await projectWithNotes();
    const answers = await statuses(PER_ADDRESS + 2, () => get(p, '/collections/notes/records', { address: '203.0.113.20', token: 'not-a-token' }));
    expect(answers).toEqual([...fill(PER_ADDRESS, 401), 429, 429]);
  });
});

describe('the project ceilings', () => {
  it(`anonymous callers together stop at ${PER_ANONYMOUS}; signed-in users go on up to the public-key ceiling of ${PER_PUBLIC_KEY}`, async () => {
    const { p, token } = await projectWithNotes();
    const [u1, u2] = [await token('u1'), await token('u2')];
    // Three addresses, each within its own limit: the anonymous ceiling refuses the rest.
    const anonymous = await statuses(PER_ADDRESS * 3, (i) => get(p, '/collections', { address: `203.0.113.${10 + Math.floor(i / PER_ADDRESS)}` }));
    expect(anonymous).toEqual([...fill(PER_ANONYMOUS, 200), ...fill(PER_ADDRESS * 3 - PER_ANONYMOUS, 429)]);
    const refused = await get(p, '/collections', { address: '203.0.113.99' });
    expect(refused.status).toBe(429);
    expect(refused.headers['ratelimit-policy']).toBe(`${PER_ANONYMOUS};w=60`);

    // What anonymous callers could not spend is the signed-in users': 12 − 6 = 6 more requests.
    expect(await statuses(PER_USER, () => get(p, '/collections/notes/records', { token: u1 }))).toEqual(fill(PER_USER, 200));
    const left = PER_PUBLIC_KEY - PER_ANONYMOUS - PER_USER;
    expect(await statuses(left, () => get(p, '/collections/notes/records', { token: u2 }))).toEqual(fill(left, 200));
    const backstop = await get(p, '/collections/notes/records', { token: u2 });
    expect(backstop.status).toBe(429);
    expect(backstop.headers['ratelimit-policy']).toBe(`${PER_PUBLIC_KEY};w=60`);
    // The secret key is counted apart.
    expect((await get(p, '/collections', { key: p.secretKey })).status).toBe(200);
  });
});

describe('signed-in users and secret keys', () => {
  it(`per user: request ${PER_USER + 1} of one signed-in user → 429; another user of the project goes on`, async () => {
    const { p, token } = await projectWithNotes();
    const [u1, u2] = [await token('u1'), await token('u2')];
    expect(await statuses(PER_USER, () => get(p, '/collections/notes/records', { token: u1 }))).toEqual(fill(PER_USER, 200));
    const limited = await get(p, '/collections/notes/records', { token: u1 });
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe('rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(limited.headers['ratelimit-policy']).toBe(`${PER_USER};w=60`);
    expect((await get(p, '/collections/notes/records', { token: u2 })).status).toBe(200);
  });

  it(`per secret key: request ${PER_SECRET_KEY + 1} with one key → 429; the project's other secret key and other projects go on`, async () => {
    const p = await freshProject();
    const other = await freshProject();
    const second = await request(t.app)
      .post(`/v1/admin/projects/${p.id}/keys`)
      .set('Authorization', `Bearer ${t.adminKey}`)
      .send({ kind: 'secret' })
      .expect(201);
    const answers = await statuses(PER_SECRET_KEY + 1, () => get(p, '/collections', { key: p.secretKey }));
    expect(answers).toEqual([...fill(PER_SECRET_KEY, 200), 429]);
    expect((await get(p, '/collections', { key: second.body.key.value as string })).status).toBe(200);
    expect((await get(other, '/collections', { key: other.secretKey })).status).toBe(200);
  });

  it('the webhook API counts against the secret key like every other call: a flood of webhook calls ends in 429 and leaves no room for more', async () => {
    const p = await freshProject();
    const answers = await statuses(PER_SECRET_KEY + 2, (i) =>
      i % 2 === 0 ? get(p, '/webhooks', { key: p.secretKey }) : get(p, '/webhooks/wh_missing/deliveries', { key: p.secretKey }),
    );
    expect(answers.slice(PER_SECRET_KEY)).toEqual([429, 429]);
    expect(answers.slice(0, PER_SECRET_KEY).every((s) => s === 200 || s === 404)).toBe(true);
    const refused = await get(p, '/collections', { key: p.secretKey });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toBe('rate_limited');
  });
});
