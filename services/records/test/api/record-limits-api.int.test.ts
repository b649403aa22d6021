/**
 * Bounded work per request (docs/records.md, "Limits"), through the real gateway in both
 * topologies: value and record size caps (400 naming the field), the page byte budget (a page
 * stops early with a cursor) and the rate limits per project key and per user (429 with
 * Retry-After; in the cluster topology two records replicas share the counters in Redis).
 */
import request from 'supertest';
import { startTestPlinth, type TestPlinth, type TestProject } from '@plinth/gateway/testing/harness';
import { client, type Client } from './client';

const PAGE_BYTES = 20_000;
const PER_PUBLIC_KEY = 12;
const PER_USER = 4;

let t: TestPlinth;
let api: Client;

beforeAll(async () => {
  t = await startTestPlinth({
    env: {
      PLINTH_MAX_PAGE_BYTES: String(PAGE_BYTES),
      PLINTH_RATE_LIMIT_PUBLIC_KEY: String(PER_PUBLIC_KEY),
      PLINTH_RATE_LIMIT_USER: String(PER_USER),
    },
  });
  api = client(t);
  await api
    .post('/collections', {
      name: 'docs',
      fields: { title: { type: 'text' }, body: { type: 'text' }, tags: { type: 'list' }, meta: { type: 'json' }, n: { type: 'integer' } },
    })
    .expect(201);
});
afterAll(() => t.close());

const nest = (depth: number): unknown => (depth === 0 ? 1 : [nest(depth - 1)]);
const KiB = 1024;

describe('value and record size caps: 400 naming the field', () => {
  it.each([
    ['text over 64 KiB', { title: 'x'.repeat(64 * KiB + 1) }, 'title', 'PLINTH_MAX_TEXT_BYTES'],
    ['text over 64 KiB in UTF-8 bytes', { title: 'é'.repeat(32 * KiB + 1) }, 'title', 'PLINTH_MAX_TEXT_BYTES'],
    ['list over 1000 items', { tags: Array.from({ length: 1001 }, (_, i) => i) }, 'tags', 'PLINTH_MAX_LIST_ITEMS'],
    ['json nested over 32 levels', { meta: nest(33) }, 'meta', 'PLINTH_MAX_JSON_DEPTH'],
    ['json over 64 KiB', { meta: { blob: 'x'.repeat(64 * KiB) } }, 'meta', 'PLINTH_MAX_JSON_BYTES'],
    ['a record over 256 KiB', { title: 'a'.repeat(60 * KiB), body: 'b'.repeat(60 * KiB), meta: { a: 'c'.repeat(60 * KiB) }, tags: ['d'.repeat(60 * KiB), 'e'.repeat(30 * KiB)] }, 'data', 'PLINTH_MAX_RECORD_BYTES'],
  ])('%s → 400 on create and on patch, nothing stored', async (_name, data, field, setting) => {
    const before = (await api.get('/collections/docs/records?limit=1000')).body.records.length;
    const res = await api.post('/collections/docs/records', { data });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_request', message: expect.stringContaining(field === 'data' ? 'record' : field), details: expect.objectContaining({ field, reason: 'too_large', setting }) });
    const small = await api.post('/collections/docs/records', { data: { title: 'small' } }).expect(201);
    const patched = await api.patch(`/collections/docs/records/${small.body.record.id}`, { data });
    expect(patched.status).toBe(400);
    expect(patched.body.details).toEqual(expect.objectContaining({ field }));
    expect((await api.get(`/collections/docs/records/${small.body.record.id}`)).body.record).toEqual(small.body.record);
    await api.delete(`/collections/docs/records/${small.body.record.id}`).expect(200);
    expect((await api.get('/collections/docs/records?limit=1000')).body.records.length).toBe(before);
  });

  it('values at the limits are stored', async () => {
    const data = { title: 'x'.repeat(64 * KiB), tags: Array.from({ length: 1000 }, (_, i) => i), meta: nest(32) };
    const res = await api.post('/collections/docs/records', { data });
    expect(res.status).toBe(201);
    expect(res.body.record).toEqual(expect.objectContaining(data));
    await api.delete(`/collections/docs/records/${res.body.record.id}`).expect(200);
  });
});

describe('page byte budget', () => {
  it('a page stops early with a cursor once it holds the budget; the cursor walks every record once', async () => {
    await api.post('/collections', { name: 'big', fields: { body: { type: 'text' }, n: { type: 'integer' } } }).expect(201);
    const ids: string[] = [];
    for (let n = 0; n < 10; n++) {
      const res = await api.post('/collections/big/records', { data: { body: 'y'.repeat(6000), n } }).expect(201);
      ids.push(res.body.record.id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const res = await api.get(`/collections/big/records?limit=1000${q}`);
      expect(res.status).toBe(200);
      // 6000 characters each: the page is cut after the record that reaches 20 000.
      expect(res.body.records.length).toBeLessThanOrEqual(4);
      expect(res.body.records.length).toBeGreaterThan(0);
      seen.push(...res.body.records.map((r: { id: string }) => r.id));
      cursor = res.body.cursor;
      pages++;
    } while (cursor && pages < 20);
    expect(seen).toEqual(ids);
    expect(pages).toBeGreaterThanOrEqual(3);
  });
});

describe('rate limits', () => {
  // Fresh project ids: rate-limit counters live in the shared Redis in the cluster topology.
  let n = 0;
  const freshProject = (): Promise<TestProject> => t.createProject(`rl-${process.pid}-${++n}-${Date.now().toString(36)}`);
  const publicGet = (p: TestProject, path: string, token?: string) => {
    const r = request(t.app).get(`/v1/projects/${p.id}${path}`).set('Authorization', `Bearer ${p.publicKey}`);
    return token ? r.set('X-Db-User-Token', token) : r;
  };

  it(`per project public key: request ${PER_PUBLIC_KEY + 1} in a minute → 429 with Retry-After; other projects and the secret key go on`, async () => {
    const p = await freshProject();
    const other = await freshProject();
    for (let i = 0; i < PER_PUBLIC_KEY; i++) {
      const ok = await publicGet(p, '/collections');
      expect(ok.status).toBe(200);
      // The IETF draft-7 headers: the policy, and what is left of it.
      expect(ok.headers['ratelimit-policy']).toBe(`${PER_PUBLIC_KEY};w=60`);
      expect(ok.headers['ratelimit']).toMatch(new RegExp(`^limit=${PER_PUBLIC_KEY}, remaining=${PER_PUBLIC_KEY - i - 1}, reset=\\d+$`));
    }
    const limited = await publicGet(p, '/collections');
    expect(limited.status).toBe(429);
    expect(limited.headers['ratelimit']).toMatch(new RegExp(`^limit=${PER_PUBLIC_KEY}, remaining=0, reset=\\d+$`));
    expect(limited.body).toEqual({ error: 'rate_limited', message: expect.any(String), details: { retry_after: expect.any(Number) } });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect((await publicGet(other, '/collections')).status).toBe(200);
    expect((await request(t.app).get(`/v1/projects/${p.id}/collections`).set('Authorization', `Bearer ${p.secretKey}`)).status).toBe(200);
  });

  it(`per user: request ${PER_USER + 1} of one signed-in user → 429; another user of the project goes on`, async () => {
    const p = await freshProject();
    const secret = (path: string) => request(t.app).post(`/v1/projects/${p.id}${path}`).set('Authorization', `Bearer ${p.secretKey}`);
    await secret('/collections').send({ name: 'notes', fields: { body: { type: 'text' } }, rules: { read: 'auth != null' } }).expect(201);
    const token = async (uid: string): Promise<string> => (await secret('/auth/tokens').send({ user_id: uid }).expect(200)).body.access_token;
    const [u1, u2] = [await token('u1'), await token('u2')];
    for (let i = 0; i < PER_USER; i++) expect((await publicGet(p, '/collections/notes/records', u1)).status).toBe(200);
    const limited = await publicGet(p, '/collections/notes/records', u1);
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe('rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await publicGet(p, '/collections/notes/records', u2)).status).toBe(200);
  });
});
