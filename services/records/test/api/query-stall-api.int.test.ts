/**
 * One request cannot stall the others (docs/records.md, "Limits"): while a deliberately heavy
 * query runs, /healthz and another project's record reads complete before it does, and the heavy
 * query ends with the time-budget error. Ordering, not timing: the assertion is which response
 * came first. Both topologies (in standalone the heavy query and the other requests share one
 * process; its queries run on SQLite reader threads), and again as a worker of `npm start` runs
 * them: each query first runs on the event loop for up to 2 ms, then moves to a reader.
 */
import { startTestPlinth, type TestPlinth, type TestProject } from '@plinth/testing/harness';

const TIMEOUT_MS = 1500;
const ITEMS = 20_000;
const RECORDS = 150;

let base: string;

async function call(method: string, path: string, key: string | null, body?: unknown): Promise<{ status: number; body: { [k: string]: unknown } }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(key ? { Authorization: `Bearer ${key}` } : {}), ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as { [k: string]: unknown } };
}

describe.each([
  ['queries on reader threads', {}],
  ['each query on the event loop for up to 2 ms first', { PLINTH_SQLITE_INLINE_QUERY_MS: '2' }],
])('%s', (_label, env: Record<string, string>) => {
  let t: TestPlinth;
  let other: TestProject;
  let otherId: string;

  beforeAll(async () => {
    t = await startTestPlinth({ env: { PLINTH_QUERY_TIMEOUT_MS: String(TIMEOUT_MS), PLINTH_MAX_LIST_ITEMS: String(ITEMS), ...env } });
    base = await t.url();
    const p = `/v1/projects/${t.project.id}`;
    expect((await call('POST', `${p}/collections`, t.project.secretKey, { name: 'heavy', fields: { tags: { type: 'list' }, rank: { type: 'number' } } })).status).toBe(201);
    const tags = Array.from({ length: ITEMS }, (_, i) => i);
    for (let i = 0; i < RECORDS; i++) expect((await call('POST', `${p}/collections/heavy/records`, t.project.secretKey, { data: { tags } })).status).toBe(201);

    other = await t.createProject();
    const o = `/v1/projects/${other.id}`;
    expect((await call('POST', `${o}/collections`, other.secretKey, { name: 'notes', fields: { body: { type: 'text' } } })).status).toBe(201);
    const created = await call('POST', `${o}/collections/notes/records`, other.secretKey, { data: { body: 'hello' } });
    otherId = (created.body.record as { id: string }).id;
  }, 120_000);
  afterAll(() => t.close());

  it('while a heavy query runs, /healthz and another project’s reads answer first; the heavy query ends with 503 query_timeout', async () => {
    const finished: string[] = [];
    const track = <T>(name: string, p: Promise<T>): Promise<T> => p.then((r) => (finished.push(name), r));
    // 30 values at the end of every list, in an order no index serves: every one of the 150 rows
    // reads its 20 000 items 30 times before the rows can be sorted.
    const where = encodeURIComponent(JSON.stringify(Array.from({ length: 30 }, (_, j) => ['tags', 'array-contains', ITEMS - 1 - j])));
    const heavy = track('heavy', call('GET', `/v1/projects/${t.project.id}/collections/heavy/records?where=${where}&orderBy=rank&limit=10`, t.project.secretKey));
    // Let the heavy query reach the database (on a blocked event loop this timer itself waits).
    await new Promise((r) => setTimeout(r, 300));
    const o = `/v1/projects/${other.id}/collections/notes/records`;
    const [health, get, list] = await Promise.all([
      track('healthz', call('GET', '/healthz', null)),
      track('other get', call('GET', `${o}/${otherId}`, other.secretKey)),
      track('other query', call('GET', `${o}?limit=5`, other.secretKey)),
    ]);
    const slow = await heavy;

    expect(health.status).toBe(200);
    expect(get.status).toBe(200);
    expect(list.status).toBe(200);
    expect((list.body.records as unknown[]).length).toBe(1);
    // The heavy query, sent first, finished last.
    expect(finished).toHaveLength(4);
    expect(finished[3]).toBe('heavy');
    expect(slow.status).toBe(503);
    expect(slow.body).toEqual({
      error: 'unavailable',
      message: expect.stringContaining(`time budget of ${TIMEOUT_MS} ms`),
      details: { reason: 'query_timeout', timeout_ms: TIMEOUT_MS },
    });
  }, 60_000);
});
