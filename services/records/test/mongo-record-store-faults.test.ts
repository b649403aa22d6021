/**
 * The mongo RecordStore under failures and interleavings a server produces and an in-memory
 * run never does, forced with the stand-in's failure injection and holds.
 */
import { asProjectId, type Collection, type RecordDoc } from '@plinth/shared';
import { createMingoDb, holdNext, injectFault } from '@plinth/shared/testing/mingo-db';
import type { Db } from 'mongodb';
import { wantedIndexes } from '../src/store/mongo/mongo-collections';
import { MongoRecordStore } from '../src/store/mongo/mongo-record-store';

const P = asProjectId('faults');
const T0 = '2026-01-01T00:00:00.000Z';
const TASKS: Collection = {
  name: 'tasks',
  fields: { title: { type: 'text' }, slug: { type: 'text', unique: true }, note: { type: 'text' } },
  rules: {},
  revision: 1,
  created_at: T0,
  updated_at: T0,
};
const RECORDS = 'rec_faults_tasks';
const rec = (n: number, data: { [k: string]: string }): RecordDoc => ({ id: `rec_${n}`, version: 1, created_at: T0, updated_at: T0, ...data });
const claim = (key: string) => ({ key, fingerprint: 'f', now: '2100-01-01T00:00:00.000Z', expiresAt: '2100-01-02T00:00:00.000Z' });
const all = { predicate: true as const, orderBy: 'created_at', direction: 'asc' as const, limit: 100 };

let db: Db;
let store: MongoRecordStore;
beforeEach(async () => {
  db = createMingoDb();
  store = new MongoRecordStore(db);
  await store.init();
});
afterEach(() => store.close());

async function indexNames(): Promise<string[]> {
  return Object.keys(await db.collection(RECORDS).indexInformation()).sort();
}
async function wantedNames(): Promise<string[]> {
  const stored = (await store.getCollection(P, 'tasks')) as Collection;
  return ['_id_', ...wantedIndexes(stored).map((w) => w.name as string)].sort();
}

describe('idempotent insert is one transaction', () => {
  it('retries a transient error (write conflict, failover) and stores the record and its key once', async () => {
    await store.createCollection(P, TASKS);
    injectFault(db, { op: 'insertOne', collection: RECORDS, error: 'transient' });
    expect(await store.insertRecord(P, TASKS, rec(1, { title: 'a' }), claim('k1'))).toEqual({ record: rec(1, { title: 'a' }), replayed: false });
    expect(await store.insertRecord(P, TASKS, rec(2, { title: 'a' }), claim('k1'))).toEqual({ record: rec(1, { title: 'a' }), replayed: true });
    expect((await store.queryRecords(P, TASKS, all)).map((r) => r.id)).toEqual(['rec_1']);
  });

  it('keeps neither key nor record when the insert fails, so the retry stores exactly one', async () => {
    await store.createCollection(P, TASKS);
    injectFault(db, { op: 'insertOne', collection: RECORDS, error: new Error('connection reset') });
    await expect(store.insertRecord(P, TASKS, rec(1, { title: 'a' }), claim('k1'))).rejects.toThrow('connection reset');
    expect(await store.insertRecord(P, TASKS, rec(2, { title: 'a' }), claim('k1'))).toMatchObject({ replayed: false });
    expect((await store.queryRecords(P, TASKS, all)).map((r) => r.id)).toEqual(['rec_2']);
  });
});

describe('collection changes converge to the stored revision', () => {
  it('a request that loses the revision check leaves none of its indexes behind', async () => {
    await store.createCollection(P, TASKS);
    const withUnique = { ...TASKS, revision: 2, fields: { ...TASKS.fields, title: { type: 'text' as const, unique: true } } };
    const withIndex = { ...TASKS, revision: 2, fields: { ...TASKS.fields, note: { type: 'text' as const, indexed: true } } };
    // The slow request read revision 1, then builds its indexes after the other one finished.
    const held = holdNext(db, 'createIndex', RECORDS);
    const slow = store.updateCollection(P, { next: withUnique, expectedRevision: 1, removedFields: [] });
    await held.reached;
    expect(await store.updateCollection(P, { next: withIndex, expectedRevision: 1, removedFields: [] })).toBe(true);
    held.release();
    expect(await slow).toBe(false);
    expect(await indexNames()).toEqual(await wantedNames());
    expect(await indexNames()).not.toContain('ux:title');
    await store.insertRecord(P, withIndex, rec(1, { title: 'same' }));
    await store.insertRecord(P, withIndex, rec(2, { title: 'same' }));
  });

  it('a slower sync of an older revision does not drop a unique index a newer revision added', async () => {
    await store.createCollection(P, TASKS);
    const r2 = { ...TASKS, revision: 2, fields: { ...TASKS.fields, note: { type: 'text' as const, indexed: true } } };
    const r3 = { ...r2, revision: 3, fields: { ...r2.fields, title: { type: 'text' as const, unique: true } } };
    // Request 2 saves, then stalls in its index sync, as it lists the indexes to drop (its third
    // listing: one to make room, one to build before saving); request 3 saves and syncs;
    // request 2 resumes with revision 2 in hand.
    const held = holdNext(db, 'listIndexes', RECORDS, 3);
    const first = store.updateCollection(P, { next: r2, expectedRevision: 1, removedFields: [] });
    await held.reached;
    expect(await store.updateCollection(P, { next: r3, expectedRevision: 2, removedFields: [] })).toBe(true);
    held.release();
    expect(await first).toBe(true);
    expect(await indexNames()).toContain('ux:title');
    expect(await indexNames()).toEqual(await wantedNames());
  });

  it('finishes removing a field’s values on the next change when the removal failed', async () => {
    await store.createCollection(P, TASKS);
    await store.insertRecord(P, TASKS, rec(1, { title: 'a', note: 'secret' }));
    const { note: _gone, ...fields } = TASKS.fields;
    const r2 = { ...TASKS, fields, revision: 2 };
    injectFault(db, { op: 'updateMany', collection: RECORDS });
    await expect(store.updateCollection(P, { next: r2, expectedRevision: 1, removedFields: ['note'] })).rejects.toThrow();
    expect((await store.getCollection(P, 'tasks'))?.revision).toBe(2);
    expect(await store.updateCollection(P, { next: { ...r2, revision: 3 }, expectedRevision: 2, removedFields: [] })).toBe(true);
    // Re-adding the field shows no old value; the record that lost it has a new version.
    const r4 = { ...r2, revision: 4, fields: { ...fields, note: { type: 'text' as const } } };
    expect(await store.updateCollection(P, { next: r4, expectedRevision: 3, removedFields: [] })).toBe(true);
    expect(await store.getRecord(P, r4, 'rec_1')).toEqual({ ...rec(1, { title: 'a' }), version: 2 });
  });

  it('a new collection does not adopt documents an insert left in a dropped one', async () => {
    await db.collection(RECORDS).insertOne({ _id: 'rec_old', version: 1, created_at: T0, updated_at: T0, data: { slug: 'x' } } as never);
    await store.createCollection(P, TASKS);
    expect(await store.queryRecords(P, TASKS, all)).toEqual([]);
    await store.insertRecord(P, TASKS, rec(1, { slug: 'x' }));
    await expect(store.insertRecord(P, TASKS, rec(2, { slug: 'x' }))).rejects.toMatchObject({ code: 'conflict' });
  });

  it('a new collection does not replay idempotency keys a crashed deletion of its namesake left', async () => {
    await store.createCollection(P, TASKS);
    await store.insertRecord(P, TASKS, rec(1, { title: 'a' }), claim('k1'));
    injectFault(db, { op: 'deleteMany', collection: 'plinth_idempotency_keys' });
    await expect(store.deleteCollection(P, 'tasks')).rejects.toThrow();
    await store.createCollection(P, TASKS);
    expect(await store.insertRecord(P, TASKS, rec(2, { title: 'a' }), claim('k1'))).toEqual({ record: rec(2, { title: 'a' }), replayed: false });
  });

  it('never shows a collection before its unique index exists', async () => {
    const held = holdNext(db, 'createIndex', RECORDS);
    const creating = store.createCollection(P, TASKS);
    await held.reached;
    expect(await store.getCollection(P, 'tasks')).toBeNull();
    expect(await store.listCollections(P)).toEqual([]);
    await expect(store.createCollection(P, TASKS)).rejects.toMatchObject({ code: 'conflict' });
    held.release();
    await creating;
    expect(await store.getCollection(P, 'tasks')).toEqual(TASKS);
    expect(await indexNames()).toContain('ux:slug');
  });

  it('takes over the claim a crashed create left behind', async () => {
    await db.collection('plinth_collections').insertOne({
      _id: 'faults/tasks',
      project: P,
      collection: TASKS,
      pending: true,
      claimed_at: new Date(Date.now() - 3_600_000),
    } as never);
    expect(await store.getCollection(P, 'tasks')).toBeNull();
    await store.createCollection(P, TASKS);
    expect(await store.getCollection(P, 'tasks')).toEqual(TASKS);
  });
});

describe('start-up across releases', () => {
  it('replaces an index of the same name whose options changed, instead of stopping', async () => {
    const old = createMingoDb();
    await old.collection('plinth_idempotency_keys').createIndex({ expires_at: 1 }, { name: 'ttl', expireAfterSeconds: 86_400 });
    await new MongoRecordStore(old).init();
    const ttl = (await old.collection('plinth_idempotency_keys').listIndexes().toArray()).find((i) => i.name === 'ttl');
    expect(ttl?.expireAfterSeconds).toBe(0);
  });

  it('stores idempotency expiry as a Date, under the TTL index', async () => {
    await store.createCollection(P, TASKS);
    await store.insertRecord(P, TASKS, rec(1, { title: 'a' }), claim('k1'));
    expect((await db.collection('plinth_idempotency_keys').findOne({}))?.expires_at).toEqual(new Date('2100-01-02T00:00:00.000Z'));
  });
});

describe('what the server refuses, the store refuses as a 4xx first', () => {
  it('a record over 16 MiB of BSON never reaches the server', async () => {
    await store.createCollection(P, TASKS);
    const big = 'x'.repeat(17 * 1024 * 1024);
    await expect(store.insertRecord(P, TASKS, rec(1, { title: big }))).rejects.toMatchObject({ code: 'payload_too_large' });
  });
});
