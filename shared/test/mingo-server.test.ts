/**
 * The stand-in's index catalog, index builds and `notablescan` behave as a MongoDB 7 server's
 * (mingo-server.ts cites the manual for each).
 */
import type { Db } from 'mongodb';
import { createMingoDb, holdNext, MAX_INDEXES_PER_COLLECTION, nextQuorumStall, noTableScan, setReplicaSet } from '../src/testing/mingo-db';

let db: Db;
beforeEach(() => {
  db = createMingoDb();
});

describe('the index catalog', () => {
  it('holds 64 indexes, _id_ included, and refuses the 65th with code 67 CannotCreateIndex', async () => {
    const c = db.collection('c');
    for (let i = 1; i < MAX_INDEXES_PER_COLLECTION; i++) await c.createIndex({ [`f${i}`]: 1 }, { name: `f${i}` });
    expect((await c.listIndexes().toArray()).length).toBe(64);
    await expect(c.createIndex({ g: 1 }, { name: 'g' })).rejects.toMatchObject({ code: 67, codeName: 'CannotCreateIndex' });
    await expect(c.createIndex({ f1: 1 }, { name: 'f1' })).resolves.toBe('f1');
  });

  it('answers listIndexes on a collection that does not exist with code 26 NamespaceNotFound', async () => {
    await expect(db.collection('nowhere').listIndexes().toArray()).rejects.toMatchObject({ code: 26, codeName: 'NamespaceNotFound' });
    await db.collection('nowhere').insertOne({ a: 1 });
    expect((await db.collection('nowhere').listIndexes().toArray()).map((i) => i.name)).toEqual(['_id_']);
  });

  it('lets two indexes share a key pattern when unique or the partial filter differ (5.0+), not under two names alone', async () => {
    const c = db.collection('c');
    await c.createIndex({ k: 1 }, { name: 'plain' });
    await c.createIndex({ k: 1 }, { name: 'unique', unique: true });
    await c.createIndex({ k: 1 }, { name: 'partial', unique: true, partialFilterExpression: { k: { $exists: true } } });
    await expect(c.createIndex({ k: 1 }, { name: 'again', unique: true })).rejects.toMatchObject({ code: 85 });
    await expect(c.createIndex({ k: 1 }, { name: 'ttl', expireAfterSeconds: 5 })).rejects.toMatchObject({ code: 85 });
  });
});

describe('index builds in a replica set', () => {
  it('with a voting member down, waits under the default commit quorum and commits under a majority', async () => {
    setReplicaSet(db, 3, 1);
    const stalled = nextQuorumStall(db);
    const waiting = db.collection('c').createIndex({ a: 1 }, { name: 'a' });
    await stalled;
    await expect(db.collection('c').createIndex({ b: 1 }, { name: 'b', commitQuorum: 'majority' })).resolves.toBe('b');
    setReplicaSet(db, 3, 0);
    await expect(waiting).resolves.toBe('a');
  });

  it('aborts a build still running at maxTimeMS with code 50, leaving no index, also when its call resumes later', async () => {
    await db.collection('c').insertOne({ a: 1 });
    const held = holdNext(db, 'createIndex', 'c');
    const build = db.collection('c').createIndexes([{ key: { a: 1 }, name: 'a' }], { maxTimeMS: 50 });
    await held.reached;
    await expect(build).rejects.toMatchObject({ code: 50, codeName: 'MaxTimeMSExpired' });
    held.release();
    await new Promise((r) => setImmediate(r));
    expect((await db.collection('c').listIndexes().toArray()).map((i) => i.name)).toEqual(['_id_']);
  });
});

describe('notablescan', () => {
  it('refuses a filter no index can serve (code 291) and runs one that leads with an indexed field', async () => {
    const c = db.collection('c');
    await c.createIndex({ project: 1, collection: 1 }, { name: 'pc' });
    await c.insertOne({ project: 'p', collection: 'x' });
    noTableScan(db, 'c');
    await expect(c.deleteMany({ collection: 'x' })).rejects.toMatchObject({ code: 291 });
    await expect(c.find({ collection: 'x' }).toArray()).rejects.toMatchObject({ code: 291 });
    expect(await c.deleteMany({ project: 'p', collection: 'x' })).toMatchObject({ deletedCount: 1 });
  });
});
