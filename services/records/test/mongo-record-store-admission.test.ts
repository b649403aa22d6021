/**
 * Queries on the MongoDB store wait for one of a bounded number of slots, in fair turns per
 * project and caller (AdmissionQueue): past the queue's bounds a query is refused at once with
 * 503 overloaded and Retry-After, and a waiting query whose client went is dropped.
 */
import { OverloadedError, UnavailableError, asProjectId, type Collection } from '@plinth/shared';
import { createMingoDb } from '@plinth/shared/testing/mingo-db';
import { MongoRecordStore } from '../src/store/mongo/mongo-record-store';
import type { RecordQuery } from '../src/store/record-store';

const p = asProjectId('mongo-admission');
const c: Collection = { name: 'c', fields: { n: { type: 'integer' } }, rules: {}, revision: 1, created_at: '', updated_at: '' };
const query = (client: RecordQuery['client']): RecordQuery => ({ predicate: true, orderBy: 'created_at', direction: 'asc', limit: 5, timeoutMs: 2000, client });

async function storeWith(admission: { concurrency: number; maxQueued: number }): Promise<MongoRecordStore> {
  const store = new MongoRecordStore(createMingoDb(), async () => {}, { admission });
  await store.init();
  await store.createCollection(p, c);
  await store.insertRecord(p, c, { id: 'r1', version: 1, created_at: 'a', updated_at: 'a', n: 1 });
  return store;
}

it('refuses a query at once with 503 overloaded when every slot is taken and the queue is full', async () => {
  const store = await storeWith({ concurrency: 1, maxQueued: 1 });
  const running = store.queryRecords(p, c, query({ id: 'user:a' }));
  const waiting = store.queryRecords(p, c, query({ id: 'user:b' }));
  const refused = store.queryRecords(p, c, query({ id: 'user:c' }));
  await expect(refused).rejects.toBeInstanceOf(OverloadedError);
  await expect(running).resolves.toHaveLength(1);
  await expect(waiting).resolves.toHaveLength(1);
  await store.close();
});

it('drops a waiting query whose client went away', async () => {
  const store = await storeWith({ concurrency: 1, maxQueued: 10 });
  const gone = new AbortController();
  const running = store.queryRecords(p, c, query({ id: 'user:a' }));
  const waiting = store.queryRecords(p, c, query({ id: 'user:b', signal: gone.signal }));
  gone.abort();
  await expect(waiting).rejects.toBeInstanceOf(UnavailableError);
  await expect(running).resolves.toHaveLength(1);
  await store.close();
});
