/**
 * Start-up index changes (ensureMongoIndex): an index an older release left with other options
 * is replaced without a moment in which its uniqueness does not hold, and two processes starting
 * together both start.
 */
import type { Collection, Db, Document } from 'mongodb';
import { ensureMongoIndex, indexFamily, type MongoIndexable } from '../src/mongo-indexes';
import { createMingoDb } from '../src/testing/mingo-db';

const OLD = { name: 'email_unique', unique: true };
const NEW = { name: 'email_unique', unique: true, partialFilterExpression: { email: { $exists: true } } };

let db: Db;
let users: Collection;
beforeEach(async () => {
  db = createMingoDb();
  users = db.collection('users');
  await users.createIndex({ email: 1 }, OLD);
  await users.insertOne({ _id: 'u1' as never, email: 'a@x.io' });
});

/** `c`, but after each of its index operations a second `a@x.io` is tried (and removed if it got in). */
function probed(c: Collection, admitted: string[]): MongoIndexable & { createIndex(key: Document, options?: Document): Promise<string> } {
  const probe = async (step: string): Promise<void> => {
    try {
      await c.insertOne({ _id: 'dup' as never, email: 'a@x.io' });
      admitted.push(step);
      await c.deleteOne({ _id: 'dup' as never });
    } catch {
      // refused: the uniqueness held
    }
  };
  return {
    listIndexes: () => c.listIndexes(),
    // (what a caller building one index at a time would use)
    createIndex: async (key: Document, options: Document = {}) => {
      const name = await c.createIndex(key, options);
      await probe(`after creating ${name}`);
      return name;
    },
    createIndexes: async (specs, options) => {
      const names = await c.createIndexes(specs, options);
      await probe(`after creating ${names.join(',')}`);
      return names;
    },
    dropIndex: async (name) => {
      const out = await c.dropIndex(name);
      await probe(`after dropping ${name}`);
      return out;
    },
  };
}

async function indexes(): Promise<Document[]> {
  return (await users.listIndexes().toArray()).filter((i) => i.name !== '_id_');
}

it('replaces a unique index whose options changed by building the new one first: no duplicate gets in at any step', async () => {
  const admitted: string[] = [];
  await ensureMongoIndex(probed(users, admitted), { email: 1 }, NEW);
  expect(admitted).toEqual([]);
  const [only, ...rest] = await indexes();
  expect(rest).toEqual([]);
  expect(indexFamily(only?.name as string)).toBe('email_unique');
  expect(only).toMatchObject({ unique: true, partialFilterExpression: { email: { $exists: true } } });
});

it('two processes starting together both start, and leave the new index alone', async () => {
  await Promise.all([ensureMongoIndex(users, { email: 1 }, NEW), ensureMongoIndex(users, { email: 1 }, NEW)]);
  const all = await indexes();
  expect(all).toHaveLength(1);
  expect(all[0]).toMatchObject({ unique: true, partialFilterExpression: { email: { $exists: true } } });
  // And the next start finds it in place under its new name.
  await ensureMongoIndex(users, { email: 1 }, NEW);
  expect(await indexes()).toEqual(all);
});

it('a later release changing it again builds it back under the first name', async () => {
  await ensureMongoIndex(users, { email: 1 }, NEW);
  await ensureMongoIndex(users, { email: 1 }, { ...NEW, partialFilterExpression: { email: { $type: 'string' } } });
  expect((await indexes()).map((i) => i.name)).toEqual(['email_unique']);
});

it('creates the index on a fresh database, where the collection does not exist yet', async () => {
  const fresh = createMingoDb();
  await ensureMongoIndex(fresh.collection('users'), { email: 1 }, NEW);
  expect((await fresh.collection('users').listIndexes().toArray()).map((i) => i.name)).toEqual(['_id_', 'email_unique']);
});

it('adopts the same index built by hand under another name instead of refusing to start', async () => {
  await users.createIndex({ email: 1 }, { ...NEW, name: 'by_hand' });
  await ensureMongoIndex(users, { email: 1 }, NEW);
  expect((await indexes()).map((i) => i.name)).toEqual(['by_hand']);
});
