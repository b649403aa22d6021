/**
 * An aggregate runs within the query time budget like a list: past it, the SQLite statement is
 * stopped (on the event loop and on a reader thread) and the call rejects with 503
 * `query_timeout`, and the same store answers the next query.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { asProjectId, type Collection } from '@plinth/shared';
import { SqliteRecordStore } from '../src/store/sqlite/sqlite-record-store';

const P = asProjectId('agg-budget');
const C: Collection = { name: 'c', fields: { n: { type: 'number' }, m: { type: 'number' } }, rules: {}, revision: 1, created_at: '', updated_at: '' };
const ROWS = 20_000;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-agg-budget-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe.each([
  ['on the event loop', () => SqliteRecordStore.open(':memory:')],
  ['on a reader thread', () => SqliteRecordStore.open(path.join(dir, 'records.db'), { readers: 1 })],
])('%s', (_label, open) => {
  let store: SqliteRecordStore;
  beforeAll(async () => {
    store = open();
    await store.createCollection(P, C);
    const at = '2026-01-01T00:00:00.000Z';
    const writes: Array<Promise<unknown>> = [];
    for (let i = 0; i < ROWS; i++) writes.push(store.insertRecord(P, C, { id: `r${i}`, version: 1, created_at: at, updated_at: at, n: i, m: i / 2 }));
    await Promise.all(writes);
  }, 120_000);
  afterAll(() => store.close());

  it('an aggregate past its budget rejects with query_timeout; the next one is answered', async () => {
    // 20 000 rows, four JSON reads each: far more than 1 ms.
    const heavy = store.aggregateRecords(P, C, { predicate: ['n', '>=', 0], sum: ['n', 'm'], avg: ['n', 'm'], timeoutMs: 1 });
    await expect(heavy).rejects.toMatchObject({ code: 'unavailable', details: { reason: 'query_timeout', timeout_ms: 1 } });
    expect(await store.aggregateRecords(P, C, { predicate: ['n', '<', 3], sum: ['n'], avg: [], timeoutMs: 10_000 })).toEqual({ count: 3, sum: { n: 3 }, avg: {} });
  });
});
