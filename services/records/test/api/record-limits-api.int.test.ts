/**
 * Bounded work per request (docs/records.md, "Limits"), through the real gateway in both
 * topologies: value and record size caps (400 naming the field) and the page byte budget (a page
 * stops early with a cursor). The rate limits are in rate-limits-api.int.test.ts.
 */
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { client, type Client } from './client';

const PAGE_BYTES = 20_000;

let t: TestPlinth;
let api: Client;

beforeAll(async () => {
  t = await startTestPlinth({
    env: {
      PLINTH_MAX_PAGE_BYTES: String(PAGE_BYTES),
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
