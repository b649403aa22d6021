/** The mingo stand-in answers like a MongoDB server where the adapters could tell the difference. */
import { BSON, DBRef, MongoInvalidArgumentError, MongoServerError, type Db } from 'mongodb';
import { callCount, createMingoDb, holdNext, injectFault } from '../src/testing/mingo-db';

let db: Db;
beforeEach(() => {
  db = createMingoDb();
});

describe('documents go through BSON', () => {
  it('refuses a NUL byte in a key and an unknown _bsontype, as the driver does', async () => {
    const c = db.collection('c');
    await expect(c.insertOne({ a: { 'x\u0000y': 1 } })).rejects.toBeInstanceOf(BSON.BSONError);
    await expect(c.insertOne({ a: { _bsontype: 'Nope' } })).rejects.toBeInstanceOf(BSON.BSONError);
    expect(await c.countDocuments()).toBe(0);
  });

  it('reads a DBRef-shaped object back as a DBRef', async () => {
    await db.collection('c').insertOne({ _id: 'a' as never, v: { $ref: 'users', $id: 'u1' } });
    expect((await db.collection('c').findOne({}))?.v).toBeInstanceOf(DBRef);
  });

  it('refuses nesting beyond 100 levels and documents over 16 MiB, also when an update grows one', async () => {
    let deep: object = { v: 1 };
    for (let i = 0; i < 101; i++) deep = { d: deep };
    await expect(db.collection('c').insertOne({ deep })).rejects.toMatchObject({ code: 15 });
    await expect(db.collection('c').insertOne({ big: 'x'.repeat(16 * 1024 * 1024) })).rejects.toMatchObject({ code: 10334 });
    await db.collection('c').insertOne({ _id: 'a' as never, s: 'x'.repeat(9 * 1024 * 1024) });
    await expect(db.collection('c').updateOne({ _id: 'a' as never }, { $set: { t: 'y'.repeat(9 * 1024 * 1024) } })).rejects.toMatchObject({ code: 10334 });
  });
});

describe('strings compare in UTF-8 byte order, as on the server', () => {
  it('sorts and filters U+FF61 before U+1F600 (JavaScript’s UTF-16 order says the opposite)', async () => {
    const c = db.collection('c');
    await c.insertMany([{ _id: 'emoji' as never, s: '\u{1F600}' }, { _id: 'halfwidth' as never, s: '\uFF61' }, { _id: 'a' as never, s: 'a' }]);
    expect((await c.find({}).sort({ s: 1 }).toArray()).map((d) => d._id)).toEqual(['a', 'halfwidth', 'emoji']);
    expect((await c.find({ s: { $gt: '\uFF61' } }).toArray()).map((d) => d._id)).toEqual(['emoji']);
    expect(await c.countDocuments({ s: { $lt: '\u{1F600}' } })).toBe(2);
  });
});

describe('indexes', () => {
  it('lists _id_ and raises 85/86 on name or option conflicts', async () => {
    const c = db.collection('c');
    await c.createIndex({ a: 1 }, { name: 'a' });
    await c.createIndex({ a: 1 }, { name: 'a' });
    expect(await c.indexInformation()).toEqual({ _id_: [['_id', 1]], a: [['a', 1]] });
    await expect(c.createIndex({ b: 1 }, { name: 'a' })).rejects.toMatchObject({ code: 86 });
    await expect(c.createIndex({ a: 1 }, { name: 'a', unique: true })).rejects.toMatchObject({ code: 86 });
    await expect(c.createIndex({ a: 1 }, { name: 'other' })).rejects.toMatchObject({ code: 85 });
    await expect(c.dropIndex('nope')).rejects.toMatchObject({ code: 27 });
  });
});

describe('updates', () => {
  it('reports modifiedCount 0 for a no-op and refuses an update without operators', async () => {
    const c = db.collection('c');
    await c.insertOne({ _id: 'a' as never, v: 1 });
    expect(await c.updateOne({ _id: 'a' as never }, { $set: { v: 1 } })).toMatchObject({ matchedCount: 1, modifiedCount: 0 });
    expect(await c.updateOne({ _id: 'a' as never }, { $set: { v: 2 } })).toMatchObject({ matchedCount: 1, modifiedCount: 1 });
    await expect(c.updateOne({ _id: 'a' as never }, { v: 3 })).rejects.toBeInstanceOf(MongoInvalidArgumentError);
  });
});

describe('sessions and failures', () => {
  it('withTransaction is all or nothing, and retries transient errors', async () => {
    const session = db.client.startSession();
    await expect(
      session.withTransaction(async () => {
        await db.collection('c').insertOne({ _id: 'a' as never }, { session });
        await db.collection('d').insertOne({ _id: 'b' as never }, { session });
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await db.collection('c').countDocuments()).toBe(0);
    injectFault(db, { op: 'insertOne', collection: 'd', error: 'transient' });
    await session.withTransaction(async () => {
      await db.collection('c').insertOne({ _id: 'a' as never }, { session });
      await db.collection('d').insertOne({ _id: 'b' as never }, { session });
    });
    expect([await db.collection('c').countDocuments(), await db.collection('d').countDocuments()]).toEqual([1, 1]);
    expect(callCount(db, 'insertOne', 'c')).toBe(3);
  });

  it('fails loudly when an operation inside a transaction forgets the session', async () => {
    const session = db.client.startSession();
    await expect(session.withTransaction(async () => db.collection('c').insertOne({ v: 1 }))).rejects.toThrow(/without the transaction's session/);
  });

  it('makes the n-th matching call throw, and holds a call until released', async () => {
    injectFault(db, { op: 'deleteMany', collection: 'c', nth: 2, error: 'network' });
    await db.collection('c').deleteMany({});
    const err = await db.collection('c').deleteMany({}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MongoServerError);
    expect((err as MongoServerError).hasErrorLabel('RetryableWriteError')).toBe(true);
    const held = holdNext(db, 'insertOne', 'c');
    const insert = db.collection('c').insertOne({ _id: 'x' as never });
    await held.reached;
    expect(await db.collection('c').countDocuments()).toBe(0);
    held.release();
    await insert;
    expect(await db.collection('c').countDocuments()).toBe(1);
  });
});
