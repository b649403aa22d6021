/**
 * The mongo RecordStore around a collection's life — a create that fails half-way, an insert
 * racing the deletion, the purge of a project, the deletes by project — forced with the
 * stand-in's faults, holds and `notablescan`.
 */
import request from 'supertest';
import { asProjectId, createLogger, internalHeaders, type Collection, type RecordDoc } from '@plinth/shared';
import { createMingoDb, holdNext, injectFault, noTableScan } from '@plinth/shared/testing/mingo-db';
import type { Db } from 'mongodb';
import { createRecordsApp, purgeRecords } from '../src/app';
import { createRulesPolicy } from '../src/rules/policy';
import { MongoRecordStore } from '../src/store/mongo/mongo-record-store';

const P = asProjectId('life');
const OTHER = asProjectId('life-other');
const T0 = '2026-01-01T00:00:00.000Z';
const TASKS: Collection = {
  name: 'tasks',
  fields: { title: { type: 'text' }, slug: { type: 'text', unique: true } },
  rules: {},
  revision: 1,
  created_at: T0,
  updated_at: T0,
};
const RECORDS = 'rec_life_tasks';
const KEYS = 'plinth_idempotency_keys';
const rec = (n: number, data: { [k: string]: string } = {}): RecordDoc => ({ id: `rec_${n}`, version: 1, created_at: T0, updated_at: T0, ...data });
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

async function storageNames(): Promise<string[]> {
  return (await db.listCollections().toArray()).map((c) => c.name as string).filter((n) => n.startsWith('rec_')).sort();
}

describe('a create that fails after its claim', () => {
  it('answers 503 (not a raw error), leaves the name free and nothing behind', async () => {
    injectFault(db, { op: 'createIndex', collection: RECORDS, error: new Error('connection reset by the server') });
    await expect(store.createCollection(P, TASKS)).rejects.toMatchObject({ status: 503, code: 'unavailable' });
    expect(await store.getCollection(P, 'tasks')).toBeNull();
    expect(await db.collection('plinth_collections').countDocuments({})).toBe(0);
    // At once, not 60 s later: the name is not held by the failed create.
    await store.createCollection(P, TASKS);
    expect(await store.getCollection(P, 'tasks')).toEqual(TASKS);
  });
});

describe('the same through the records API', () => {
  const SECRET = 's'.repeat(40);
  const path = `/v1/projects/${P}/collections`;
  const send = (method: 'get' | 'post', url: string, body?: object) => {
    const headers = internalHeaders(SECRET, { project: P, keyKind: 'secret', requestId: `r-${Math.random()}` }, { method: method.toUpperCase(), path: url }, body && JSON.stringify(body));
    const app = createRecordsApp({ logger: createLogger('test', 'silent'), internalSecret: SECRET, store, policy: createRulesPolicy() });
    const req = request(app)[method](url).set(headers);
    return body ? req.send(body) : req;
  };

  it('a create failing after its claim answers the 503 envelope; GET and a second POST agree the name is free', async () => {
    injectFault(db, { op: 'createIndex', collection: RECORDS, error: new Error('connection reset by the server') });
    const body = { name: 'tasks', fields: { slug: { type: 'text', unique: true } } };
    const failed = await send('post', path, body);
    expect(failed.status).toBe(503);
    expect(failed.body).toEqual({ error: 'unavailable', message: expect.any(String) });
    expect((await send('get', `${path}/tasks`)).status).toBe(404);
    expect((await send('post', path, body)).status).toBe(201);
  });
});

describe('an insert racing the deletion of its collection', () => {
  // Held before its first write: the insert itself, or the transaction's first read of the key
  // (a deletion meeting a transaction's writes would wait for it to end, as on a server).
  it.each([
    ['without', undefined, () => holdNext(db, 'insertOne', RECORDS)],
    ['with', claim('k1'), () => holdNext(db, 'find', KEYS)],
  ])('%s an idempotency key: answers 404 and leaves no record behind, when it lands after the drop', async (_with, key, hold) => {
    await store.createCollection(P, TASKS);
    const held = hold();
    const insert = store.insertRecord(P, TASKS, rec(1, { title: 'late' }), key);
    await held.reached;
    expect(await store.deleteCollection(P, 'tasks')).toBe(true);
    held.release();
    await expect(insert).rejects.toMatchObject({ status: 404, code: 'not_found' });
    expect(await db.collection(RECORDS).countDocuments({})).toBe(0);
    expect(await db.collection(KEYS).countDocuments({})).toBe(0);
    // A new collection of that name starts empty, and the key is free.
    await store.createCollection(P, TASKS);
    expect(await store.insertRecord(P, TASKS, rec(2), key)).toMatchObject({ replayed: false });
    expect((await store.queryRecords(P, TASKS, all)).map((r) => r.id)).toEqual(['rec_2']);
  });
});

describe('project purge', () => {
  it('removes pending claims, orphaned record storage and every key of the project, and nothing of another', async () => {
    await store.createCollection(P, TASKS);
    await store.insertRecord(P, TASKS, rec(1), claim('k1'));
    await store.createCollection(OTHER, TASKS);
    await store.insertRecord(OTHER, TASKS, rec(1), claim('k1'));
    // A create that crashed after its claim, and a record an insert left after a drop.
    await db.collection('plinth_collections').insertOne({ _id: 'life/crashed', project: P, collection: { ...TASKS, name: 'crashed' }, pending: true, claimed_at: new Date() } as never);
    await db.collection('rec_life_ghost').insertOne({ _id: 'rec_9', version: 1, created_at: T0, updated_at: T0, data: {} } as never);

    await purgeRecords(store, P);

    expect(await db.collection('plinth_collections').find({ project: P }).toArray()).toEqual([]);
    expect(await db.collection(KEYS).find({ project: P }).toArray()).toEqual([]);
    expect(await storageNames()).toEqual(['rec_life-other_tasks']);
    expect(await store.getRecord(OTHER, TASKS, 'rec_1')).toMatchObject({ id: 'rec_1' });
    expect(await db.collection(KEYS).countDocuments({ project: OTHER })).toBe(1);
    // The name is free again.
    await store.createCollection(P, { ...TASKS, name: 'crashed' });
  });

  it('a create still building its indexes when the project is purged leaves no storage behind', async () => {
    const held = holdNext(db, 'createIndex', RECORDS);
    const creating = store.createCollection(P, TASKS);
    await held.reached;
    await purgeRecords(store, P);
    held.release();
    await expect(creating).rejects.toMatchObject({ code: 'conflict' });
    expect(await storageNames()).toEqual([]);
    expect(await db.collection('plinth_collections').countDocuments({})).toBe(0);
  });
});

describe('idempotency keys are deleted through an index', () => {
  it('collection create, delete and project purge never scan every tenant’s keys (the server runs with notablescan)', async () => {
    noTableScan(db, KEYS);
    await store.createCollection(P, TASKS);
    await store.insertRecord(P, TASKS, rec(1), claim('k1'));
    expect(await store.deleteCollection(P, 'tasks')).toBe(true);
    await store.createCollection(P, TASKS);
    await purgeRecords(store, P);
    expect(await db.collection(KEYS).countDocuments({ project: P })).toBe(0);
  });
});
