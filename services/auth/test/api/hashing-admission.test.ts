import http from 'node:http';
import bcrypt from 'bcrypt';
import { waitFor } from '@plinth/shared/testing/wait-for';
import { useAuthTestService, type CallResult } from './auth-test-service';

const FLOOD_PASSWORD = 'flood password 1';
const OTHER_PASSWORD = 'other password 2';

/**
 * Holds every bcrypt comparison until `open()`, recording the password of each one that started:
 * how a test sees which hashes ran, and in what order, without timing anything.
 */
class HashGate {
  readonly started: string[] = [];
  private release!: () => void;
  private readonly opened = new Promise<void>((resolve) => (this.release = resolve));

  constructor() {
    const compare = bcrypt.compare.bind(bcrypt) as (data: string, encrypted: string) => Promise<boolean>;
    jest.spyOn(bcrypt, 'compare').mockImplementation((async (data: string, encrypted: string) => {
      this.started.push(data);
      await this.opened;
      return compare(data, encrypted);
    }) as unknown as typeof bcrypt.compare);
  }

  open(): void {
    this.release();
  }
}

/**
 * Password hashing under overload (docs/auth.md "Under overload"): one hashing thread, at most
 * four hashes waiting (three of one project), so a burst overflows at once.
 */
describe('Auth API: password hashing is admitted through a bounded, fair queue', () => {
  const t = useAuthTestService({ PLINTH_HASH_CONCURRENCY: '1', PLINTH_HASH_MAX_QUEUED: '4', PLINTH_HASH_MAX_WAIT_MS: '60000' });

  afterEach(() => jest.restoreAllMocks());

  async function projectWithUser(email: string, password: string): Promise<string> {
    const p = await t.enabledProject({ send_verification_on_signup: false });
    const r = await t.call({ method: 'post', path: '/auth/signup', project: p, body: { email, password } });
    expect(r.status).toBe(201);
    return p;
  }

  const signIn = (project: string, email: string, password: string): Promise<CallResult> =>
    t.call({ method: 'post', path: '/auth/signin', project, body: { email, password } });

  /** Starts the calls and resolves with the ones that are answered while the hashes are held. */
  async function answeredWhileHeld(calls: Promise<CallResult>[], expected: number): Promise<CallResult[]> {
    const settled: CallResult[] = [];
    for (const call of calls) void call.then((r) => settled.push(r));
    await waitFor(`${expected} sign-ins answered while the hashes are held`, () => settled.length >= expected);
    return settled;
  }

  it('answers a burst beyond the queue with 503 overloaded and Retry-After at once; the admitted ones succeed', async () => {
    const p = await projectWithUser('ada@example.com', FLOOD_PASSWORD);
    const gate = new HashGate();
    const burst = Array.from({ length: 10 }, () => signIn(p, 'ada@example.com', FLOOD_PASSWORD));
    // One hash runs, three wait (the project's share of the queue): six are refused before any finishes.
    const refused = await answeredWhileHeld(burst, 6);
    expect(gate.started).toHaveLength(1);
    for (const r of refused) {
      expect(r.status).toBe(503);
      expect(r.body).toMatchObject({ error: 'overloaded', details: { retry_after: 1 } });
      expect(r.headers['retry-after']).toBe('1');
    }
    gate.open();
    const all = await Promise.all(burst);
    const answered = all.filter((r) => r.status !== 503);
    expect(answered).toHaveLength(4);
    for (const r of answered) expect(r.status).toBe(200);
    expect(gate.started).toHaveLength(4);
  });

  it('never runs the hash of a client that went away while it waited', async () => {
    const p = await projectWithUser('grace@example.com', FLOOD_PASSWORD);
    const gate = new HashGate();
    const running = signIn(p, 'grace@example.com', FLOOD_PASSWORD);
    await waitFor('the first hash to start', () => gate.started.length === 1);

    const body = JSON.stringify({ email: 'grace@example.com', password: 'a client that leaves' });
    const leaving = http.request(`${await t.listen()}/v1/projects/${p}/auth/signin`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${t.publicKey(p)}`, 'Content-Type': 'application/json', 'X-Forwarded-For': '198.51.100.20' },
    });
    leaving.on('error', () => {}); // destroyed below, on purpose
    leaving.end(body);
    await waitFor('the second sign-in to wait for the hashing thread', () => t.service.hashing().queued === 1);
    leaving.destroy();
    await waitFor('the abandoned sign-in to leave the queue', () => t.service.hashing().queued === 0);

    gate.open();
    expect((await running).status).toBe(200);
    expect((await signIn(p, 'grace@example.com', FLOOD_PASSWORD)).status).toBe(200);
    expect(gate.started).toEqual([FLOOD_PASSWORD, FLOOD_PASSWORD]);
  });

  it("admits another project's sign-in while one project floods, and hashes it within a turn", async () => {
    const flooded = await projectWithUser('flood@example.com', FLOOD_PASSWORD);
    const other = await projectWithUser('calm@example.com', OTHER_PASSWORD);
    const gate = new HashGate();
    const flood = Array.from({ length: 8 }, () => signIn(flooded, 'flood@example.com', FLOOD_PASSWORD));
    const refused = await answeredWhileHeld(flood, 4);
    for (const r of refused) expect(r.status).toBe(503);

    const calm = signIn(other, 'calm@example.com', OTHER_PASSWORD);
    await waitFor("the other project's sign-in to be queued", () => t.service.hashing().queued === 4);
    gate.open();
    expect((await calm).status).toBe(200);
    expect((await Promise.all(flood)).filter((r) => r.status === 200)).toHaveLength(4);
    // Projects take turns: the other project's hash waited behind at most one of the three the
    // flooding project had queued before it (the turn that was already the flood's).
    expect(gate.started).toHaveLength(5);
    expect(gate.started.indexOf(OTHER_PASSWORD)).toBeLessThanOrEqual(2);
  });
});
