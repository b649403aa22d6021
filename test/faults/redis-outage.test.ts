import { startCluster, type Cluster } from '@plinth/testing/cluster';
import { enableAuth, type ProjectAccess, type SessionBody } from '../e2e/support/api';
import { OwnRedis } from './support/own-redis';

/**
 * Fault: the Redis behind auth (sessions, rate limits), records (session checks for user tokens,
 * rate-limit counters, internal-credential nonces) and the mail queue goes down, or hangs
 * (SIGSTOP: connections open, nothing answers). What needs a session gets a quick 503
 * `unavailable` envelope — never a hang, never a 500 — and `/readyz` of each service that needs
 * Redis says so; what needs no session (secret-key reads, anonymous reads under rules that do not
 * involve a user) goes on answering 200. Everything works again once Redis is back.
 */
describe('Redis down or hung', () => {
  let redis: OwnRedis;
  let cluster: Cluster;
  let p: ProjectAccess;
  let session: SessionBody;
  let noteId: string;
  let seq = 0;
  const PASSWORD = 'correct horse 1';

  interface Answer {
    status: number;
    body: { error?: string; message?: string } & Partial<SessionBody>;
  }

  /** One call through the gateway; aborted (failing the test) if it hangs for 10 s. */
  async function call(method: string, path: string, opts: { key?: string; dbUserToken?: string; body?: unknown } = {}): Promise<Answer> {
    const headers: Record<string, string> = {};
    if (opts.key) headers.Authorization = `Bearer ${opts.key}`;
    if (opts.dbUserToken) headers['X-Db-User-Token'] = opts.dbUserToken;
    if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(`${cluster.url}/v1/projects/${p.id}${path}`, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : {} };
  }

  const signIn = () => call('POST', '/auth/signin', { key: p.publicKey, body: { email: 'steady@example.com', password: PASSWORD } });
  const signUp = () => call('POST', '/auth/signup', { key: p.publicKey, body: { email: `new${++seq}@example.com`, password: PASSWORD } });
  const refresh = () => call('POST', '/auth/refresh', { key: p.publicKey, body: { refresh_token: session.refresh_token } });
  const readNote = () => call('GET', `/collections/notes/records/${noteId}`, { key: p.publicKey, dbUserToken: session.access_token });
  const readNoteWithSecretKey = () => call('GET', `/collections/notes/records/${noteId}`, { key: p.secretKey });
  const listNotesWithSecretKey = () => call('GET', '/collections/notes/records', { key: p.secretKey });
  const readNewsAnonymously = () => call('GET', '/collections/news/records', { key: p.publicKey });

  async function readyz(service: 'auth' | 'records' | 'mailer'): Promise<Answer> {
    const proc = cluster.processes.find((x) => x.name === `${service}-0`)!;
    const res = await fetch(`${proc.url}/readyz`, { signal: AbortSignal.timeout(10_000) });
    return { status: res.status, body: (await res.json()) as Answer['body'] };
  }

  async function expectUnavailable(what: string, answer: Answer): Promise<void> {
    expect({ what, status: answer.status, error: answer.body.error }).toEqual({ what, status: 503, error: 'unavailable' });
  }

  /** Signs in until it works (Redis reconnects in the background within about a second). */
  async function untilSignedIn(): Promise<SessionBody> {
    for (let i = 0; i < 100; i++) {
      const res = await signIn();
      if (res.status === 200) return res.body as SessionBody;
      expect(res.status).toBe(503);
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('sign-in never recovered');
  }

  /** Secret-key and anonymous reads, a few times each (the rate-limit counters and nonces are checked on each). */
  async function expectKeyOnlyReadsServed(): Promise<void> {
    for (let i = 0; i < 5; i++) {
      for (const [what, read] of [
        ['secret-key read', readNoteWithSecretKey],
        ['secret-key query', listNotesWithSecretKey],
        ['anonymous public read', readNewsAnonymously],
      ] as const) {
        const answer = await read();
        expect({ what, status: answer.status }).toEqual({ what, status: 200 });
      }
    }
  }

  async function expectSessionsUnavailable(): Promise<void> {
    await expectUnavailable('sign-in', await signIn());
    await expectUnavailable('refresh', await refresh());
    await expectUnavailable('sign-up', await signUp());
    await expectUnavailable('user-token read', await readNote());
    for (const service of ['auth', 'records', 'mailer'] as const) {
      const ready = await readyz(service);
      expect({ service, status: ready.status }).toEqual({ service, status: 503 });
      expect(ready.body.message).toMatch(/Redis/);
    }
  }

  beforeAll(async () => {
    redis = await OwnRedis.start();
    cluster = await startCluster({ env: { REDIS_URL: redis.url } });
    p = { url: cluster.url, ...(await cluster.createProject('faults-redis')) };
    await enableAuth(p, { send_verification_on_signup: false });
    const notes = await call('POST', '/collections', {
      key: p.secretKey,
      body: { name: 'notes', fields: { owner: { type: 'text', required: true } }, rules: { read: 'auth != null && record.owner == auth.uid' } },
    });
    expect(notes.status).toBe(201);
    const up = await call('POST', '/auth/signup', { key: p.publicKey, body: { email: 'steady@example.com', password: PASSWORD } });
    expect(up.status).toBe(201);
    session = up.body as SessionBody;
    const note = await call('POST', '/collections/notes/records', { key: p.secretKey, body: { data: { owner: session.user.id } } });
    noteId = (note.body as unknown as { record: { id: string } }).record.id;
    const news = await call('POST', '/collections', { key: p.secretKey, body: { name: 'news', fields: { title: { type: 'text' } }, rules: { read: 'true' } } });
    expect(news.status).toBe(201);
    expect((await call('POST', '/collections/news/records', { key: p.secretKey, body: { data: { title: 'open' } } })).status).toBe(201);
  }, 60_000);

  afterAll(async () => {
    redis?.resume();
    await cluster?.stop();
    await redis?.kill();
  });

  it('hung (SIGSTOP): sign-in, refresh, sign-up and user-token reads answer 503 instead of hanging; /readyz says Redis; secret-key and anonymous reads answer 200', async () => {
    redis.pause();
    try {
      await expectSessionsUnavailable();
      await expectKeyOnlyReadsServed();
    } finally {
      redis.resume();
    }
    session = await untilSignedIn();
    expect((await readNote()).status).toBe(200);
    for (const service of ['auth', 'records', 'mailer'] as const) expect((await readyz(service)).status).toBe(200);
  });

  it('down (killed): the same quick 503s and 200s; after it restarts (empty) users sign in again and read', async () => {
    await redis.kill();
    await expectSessionsUnavailable();
    await expectKeyOnlyReadsServed();
    await redis.start();
    session = await untilSignedIn();
    expect((await readNote()).status).toBe(200);
    expect((await refresh()).status).toBe(200);
    for (const service of ['auth', 'records', 'mailer'] as const) expect((await readyz(service)).status).toBe(200);
  });
});
