/**
 * Where mingo alone would answer differently from a MongoDB server, the stand-in answers like
 * the server. Each test states the server's behaviour and the manual page that says so.
 */
import { MongoServerError, type Db } from 'mongodb';
import { createMingoDb, injectFault, stallCommits } from '../src/testing/mingo-db';

let db: Db;
beforeEach(() => {
  db = createMingoDb();
});

const ids = (docs: Array<{ _id?: unknown }>) => docs.map((d) => d._id).sort();

describe('regular expressions see the stored string, code point by code point', () => {
  // The server matches $regex with PCRE in UTF-8 mode: an emoji or a private-use character is
  // one character like any other. https://www.mongodb.com/docs/manual/reference/operator/query/regex/
  it('finds strings holding emoji and private-use characters, and `.` matches one of them', async () => {
    const c = db.collection('c');
    await c.insertMany([
      { _id: 'emoji' as never, s: 'Tea \u{1F375} time' },
      { _id: 'private' as never, s: 'x\uE000y' },
      { _id: 'plain' as never, s: 'tea time' },
    ]);
    expect(ids(await c.find({ s: { $regex: '\u{1F375}' } }).toArray())).toEqual(['emoji']);
    expect(ids(await c.find({ s: { $regex: '\uE000' } }).toArray())).toEqual(['private']);
    expect(ids(await c.find({ s: { $regex: '^x.y$' } }).toArray())).toEqual(['private']);
    expect(ids(await c.find({ s: { $regex: 'Tea . time' } }).toArray())).toEqual(['emoji']);
    expect(await c.countDocuments({ s: { $regex: 'TEA', $options: 'i' } })).toBe(2);
  });
});

describe('filters are BSON-encoded by the driver before the server sees them', () => {
  // The driver serializes the filter to BSON (strings as UTF-8, `undefined` as null unless
  // ignoreUndefined): https://www.mongodb.com/docs/drivers/node/current/fundamentals/bson/undefined-values/
  // and a null query matches a missing field: https://www.mongodb.com/docs/manual/tutorial/query-for-null-fields/
  it('a lone surrogate in a filter arrives as U+FFFD, and `undefined` as null', async () => {
    const c = db.collection('c');
    await c.insertMany([{ _id: 'lone' as never, s: 'a\uD800' }, { _id: 'missing' as never }]);
    // Stored through BSON too: the document holds "a\uFFFD".
    expect(ids(await c.find({ s: 'a\uD800' }).toArray())).toEqual(['lone']);
    expect(ids(await c.find({ s: undefined }).toArray())).toEqual(['missing']);
  });
});

describe('reads outside a transaction never see its uncommitted writes', () => {
  // "Until a transaction commits, the data changes made in the transaction are not visible
  // outside the transaction." https://www.mongodb.com/docs/manual/core/transactions/#transactions-and-atomicity
  it('find and countDocuments outside see the state before the transaction until it commits', async () => {
    const c = db.collection('c');
    await c.insertOne({ _id: 'old' as never, v: 1 });
    const session = db.client.startSession();
    let inside!: () => void;
    let commit!: () => void;
    const reachedInside = new Promise<void>((r) => (inside = r));
    const mayCommit = new Promise<void>((r) => (commit = r));
    const tx = session.withTransaction(async () => {
      await c.insertOne({ _id: 'new' as never, v: 2 }, { session });
      await c.deleteOne({ _id: 'old' as never }, { session });
      expect(ids(await c.find({}, { session }).toArray())).toEqual(['new']);
      inside();
      await mayCommit;
    });
    await reachedInside;
    expect(ids(await c.find({}).toArray())).toEqual(['old']);
    expect(await c.countDocuments({})).toBe(1);
    commit();
    await tx;
    expect(ids(await c.find({}).toArray())).toEqual(['new']);
  });
});

describe('`$elemMatch` on scalars compares each element whole', () => {
  // An array element that is itself an array is one value: {$elemMatch: {$eq: 'x'}} does not
  // look inside it. https://www.mongodb.com/docs/manual/reference/operator/query/elemMatch/ and
  // https://www.mongodb.com/docs/manual/tutorial/query-arrays/ (nested arrays match only whole)
  it('array-contains matches a top-level element, not one inside a nested array', async () => {
    const c = db.collection('c');
    await c.insertMany([
      { _id: 'flat' as never, tags: ['x', 'y'] },
      { _id: 'nested' as never, tags: [['x'], 'z'] },
    ]);
    expect(ids(await c.find({ tags: { $elemMatch: { $eq: 'x' } } }).toArray())).toEqual(['flat']);
    expect(ids(await c.find({ tags: { $elemMatch: { $in: ['x', 'q'] } } }).toArray())).toEqual(['flat']);
    expect(ids(await c.find({ tags: { $elemMatch: { $eq: ['x'] } } }).toArray())).toEqual(['nested']);
  });
});

describe('time limits and unacknowledged commits (fault hooks)', () => {
  // maxTimeMS: https://www.mongodb.com/docs/manual/reference/method/cursor.maxTimeMS/
  it('a slow query fails with MaxTimeMSExpired (code 50) when it carries maxTimeMS', async () => {
    injectFault(db, { op: 'find', collection: 'c', error: 'slow' });
    await expect(db.collection('c').find({}).maxTimeMS(100).toArray()).rejects.toMatchObject({ code: 50 });
    injectFault(db, { op: 'find', collection: 'c', error: 'slow' });
    await expect(db.collection('c').find({}).toArray()).rejects.toThrow(/without maxTimeMS/);
  });

  // maxCommitTimeMS bounds the commit, and the driver does not retry MaxTimeMSExpired:
  // https://www.mongodb.com/docs/manual/reference/method/Session.commitTransaction/ and the
  // driver's withTransaction (retries UnknownTransactionCommitResult for up to 120 s otherwise).
  it('a commit whose write concern is never satisfied fails after maxCommitTimeMS, its writes kept whole', async () => {
    const c = db.collection('c');
    stallCommits(db, 1);
    const session = db.client.startSession();
    const started = Date.now();
    const err = await session
      .withTransaction(async () => {
        await c.insertOne({ _id: 'a' as never }, { session });
        await c.insertOne({ _id: 'b' as never }, { session });
      }, { maxCommitTimeMS: 200 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MongoServerError);
    expect(err).toMatchObject({ code: 50 });
    expect(Date.now() - started).toBeLessThan(1_200);
    expect(ids(await c.find({}).toArray())).toEqual(['a', 'b']);
  });

  it('without maxCommitTimeMS the commit is retried after each write-concern timeout, as the driver does', async () => {
    stallCommits(db, 2);
    const session = db.client.startSession();
    await session.withTransaction(async () => {
      await db.collection('c').insertOne({ _id: 'a' as never }, { session });
    }, { writeConcern: { w: 'majority', wtimeoutMS: 50 } });
    // Two unacknowledged attempts, then the third commit is acknowledged: no error.
    expect(await db.collection('c').countDocuments({})).toBe(1);
  });
});
