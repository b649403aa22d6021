/**
 * Index builds made inside a request (a collection create, a PATCH adding an indexed field) are
 * bounded: they commit at a majority of voting members, so one member down does not hold them,
 * and they stop at their time budget with a 503 that changed nothing.
 */
import { asProjectId, type Collection } from '@plinth/shared';
import { createMingoDb, holdNext, nextQuorumStall, setReplicaSet } from '@plinth/shared/testing/mingo-db';
import type { Db } from 'mongodb';
import { MongoRecordStore } from '../src/store/mongo/mongo-record-store';

const P = asProjectId('builds');
const T0 = '2026-01-01T00:00:00.000Z';
const TASKS: Collection = { name: 'tasks', fields: { title: { type: 'text' } }, rules: {}, revision: 1, created_at: T0, updated_at: T0 };
const INDEXED: Collection = { ...TASKS, revision: 2, fields: { title: { type: 'text', indexed: true } } };
const RECORDS = 'rec_builds_tasks';

let db: Db;
let store: MongoRecordStore;
beforeEach(async () => {
  db = createMingoDb();
  store = new MongoRecordStore(db, async () => {}, { indexBuildTimeMs: 200 });
  await store.init();
});
afterEach(async () => {
  setReplicaSet(db, 1, 0);
  await store.close();
});

async function indexNames(): Promise<string[]> {
  return (await db.collection(RECORDS).listIndexes().toArray()).map((i) => i.name as string).sort();
}

it('with one of three voting members down, a create and a PATCH adding an indexed field still finish', async () => {
  setReplicaSet(db, 3, 1);
  const stalled = nextQuorumStall(db).then(() => 'waiting for the member that is down');
  const change = (async () => {
    await store.createCollection(P, TASKS);
    return (await store.updateCollection(P, { next: INDEXED, expectedRevision: 1, removedFields: [] })) ? 'done' : 'lost';
  })();
  expect(await Promise.race([change, stalled])).toBe('done');
  expect(await indexNames()).toContain('ix:title');
});

it('a build that runs past its budget is stopped: 503 index_build_timeout, the definition and indexes unchanged', async () => {
  await store.createCollection(P, TASKS);
  const before = await indexNames();
  const held = holdNext(db, 'createIndex', RECORDS);
  // The build is held far past the budget (200 ms), then let go.
  const letGo = held.reached.then(() => new Promise((r) => setTimeout(r, 1500))).then(() => held.release());
  const change = store.updateCollection(P, { next: INDEXED, expectedRevision: 1, removedFields: [] });
  await expect(change).rejects.toMatchObject({ status: 503, code: 'unavailable', details: { reason: 'index_build_timeout', timeout_ms: 200 } });
  await letGo;
  expect(await store.getCollection(P, 'tasks')).toEqual(TASKS);
  expect(await indexNames()).toEqual(before);
  // Nothing is stuck: the same change goes through once builds are quick again.
  expect(await store.updateCollection(P, { next: INDEXED, expectedRevision: 1, removedFields: [] })).toBe(true);
});
