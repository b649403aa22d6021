/**
 * Aggregates are admitted like pages of records: on SQLite they wait in the readers' lanes and on
 * MongoDB in the store's queue, in the same fair share per caller, so past a caller's share of
 * the queue an aggregate is refused at once with 503 overloaded (Retry-After) like any query.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { OverloadedError, asProjectId, type Collection } from '@plinth/shared';
import { createMingoDb } from '@plinth/shared/testing/mingo-db';
import { MongoRecordStore } from '../src/store/mongo/mongo-record-store';
import type { AggregateQuery, RecordQuery, RecordStore } from '../src/store/record-store';
import { SqliteRecordStore } from '../src/store/sqlite/sqlite-record-store';

const P = asProjectId('agg-admission');
const C: Collection = { name: 'c', fields: { n: { type: 'integer' } }, rules: {}, revision: 1, created_at: '', updated_at: '' };
const WHO = { id: 'user:a' };
const page: RecordQuery = { predicate: true, orderBy: 'created_at', direction: 'asc', limit: 5, timeoutMs: 5000, client: WHO };
const count: AggregateQuery = { predicate: true, sum: ['n'], avg: [], timeoutMs: 5000, client: WHO };

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-agg-admission-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe.each<[string, () => Promise<RecordStore>]>([
  // One reader per lane; a caller may queue half of 2 queries.
  ['sqlite, one reader per lane', async () => SqliteRecordStore.open(path.join(dir, 'records.db'), { readers: 1, admission: { maxQueued: 2 } })],
  ['mongo adapter on mingo, one slot', async () => new MongoRecordStore(createMingoDb(), async () => {}, { admission: { concurrency: 1, maxQueued: 2 } })],
])('%s', (_label, open) => {
  it("an aggregate past its caller's share of the queue is refused with 503 overloaded; the admitted ones are answered", async () => {
    const store = await open();
    try {
      if (store instanceof MongoRecordStore) await store.init();
      await store.createCollection(P, C);
      for (let i = 1; i <= 3; i++) await store.insertRecord(P, C, { id: `r${i}`, version: 1, created_at: `t${i}`, updated_at: `t${i}`, n: i });
      const running = store.queryRecords(P, C, page);
      const queued = store.aggregateRecords(P, C, count);
      const refused = store.aggregateRecords(P, C, count);
      await expect(refused).rejects.toBeInstanceOf(OverloadedError);
      await expect(refused).rejects.toMatchObject({ status: 503, headers: { 'Retry-After': '1' } });
      await expect(running).resolves.toHaveLength(3);
      await expect(queued).resolves.toEqual({ count: 3, sum: { n: 6 }, avg: {} });
    } finally {
      await store.close();
    }
  });
});
