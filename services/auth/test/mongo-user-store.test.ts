import { MongoClient } from 'mongodb';
import { asProjectId, ConflictError, newId, toPlinthError } from '@plinth/shared';
import { callCount, createMingoDb, injectFault } from '@plinth/shared/testing/mingo-db';
import { newUserRecord } from '../src/domain/new-user';
import { MongoUserStore } from '../src/store/mongo-user-store';
import { describeIdentityContract } from './identity-store-contract';
import { describeUserStoreContract } from './user-store-contract';

describeUserStoreContract('mongo on the mingo fake (query translation)', async () => {
  const store = await MongoUserStore.open(createMingoDb());
  return { store, cleanup: async () => {} };
});

describeIdentityContract('mongo on the mingo fake (query translation)', async () => {
  const store = await MongoUserStore.open(createMingoDb());
  return { store, cleanup: async () => {} };
});

describe('MongoUserStore on the stand-in: what only MongoDB can get wrong', () => {
  const project = asProjectId('auth-mongo');
  const T = Date.UTC(2100, 0, 1);

  it('stores token and code expiry as Date under a TTL index, so the server removes them once expired', async () => {
    const db = createMingoDb();
    const store = await MongoUserStore.open(db);
    await store.putOneTimeToken(project, { token_hash: 'th', kind: 'verify', user_id: 'usr_a', expires_at: T });
    await store.issueOtp(project, { email: 'a@x.io', code_hash: 'c', now: T - 60_000, expires_at: T, resend_after: T - 120_000 });
    for (const name of ['auth_one_time_tokens', 'auth_otps']) {
      const doc = await db.collection(name).findOne({});
      expect(doc?.expires_at).toEqual(new Date(T));
      expect(await db.collection(name).indexInformation()).toMatchObject({ ttl: [['expires_at', 1]] });
    }
    expect(await store.consumeOneTimeToken(project, 'verify', 'th', T - 1)).toBe('usr_a');
    expect(await store.redeemOtp(project, 'a@x.io', 'c', T - 1, 5)).toBe(true);
  });

  it('replaces the e-mail index of older releases (unique over every user) by one over users with an e-mail, so anonymous users fit', async () => {
    const db = createMingoDb();
    await db.collection('auth_users').createIndex({ project: 1, email: 1 }, { name: 'project_email', unique: true });
    const store = await MongoUserStore.open(db);
    await store.createUser(project, newUserRecord(null, { is_anonymous: true }, T));
    await store.createUser(project, newUserRecord(null, { is_anonymous: true }, T));
    await store.createUser(project, newUserRecord('a@x.io', {}, T));
    await expect(store.createUser(project, newUserRecord('A@x.io', {}, T))).rejects.toThrow(ConflictError);
  });

  it('reports "e-mail taken" only for a duplicate e-mail, not for a duplicate on another index', async () => {
    const store = await MongoUserStore.open(createMingoDb());
    const user = newUserRecord('a@x.io', {}, T);
    await store.createUser(project, user);
    await expect(store.createUser(project, { ...newUserRecord('a@x.io', {}, T) })).rejects.toMatchObject({ details: { field: 'email' } });
    const sameId = store.createUser(project, { ...user, email: 'other@x.io' });
    await expect(sameId).rejects.toThrow(/E11000/);
    await expect(sameId).rejects.not.toBeInstanceOf(ConflictError);
  });

  it('starts when an index of the same name has other options (left by an older release), replacing it', async () => {
    const db = createMingoDb();
    await db.collection('auth_users').createIndex({ project: 1, created_at: 1 }, { name: 'project_created' });
    await db.collection('auth_otps').createIndex({ expires_at: 1 }, { name: 'ttl', expireAfterSeconds: 3600 });
    await MongoUserStore.open(db);
    // Built beside the old one under its other name (`~2`), then the old one dropped.
    expect((await db.collection('auth_users').indexInformation())['project_created~2']).toEqual([['project', 1], ['created_at', 1], ['id', 1]]);
    expect((await db.collection('auth_users').indexInformation()).project_created).toBeUndefined();
    const ttl = (await db.collection('auth_otps').listIndexes().toArray()).find((i) => i.name === 'ttl');
    expect(ttl?.expireAfterSeconds).toBe(0);
  });
});

describe('MongoUserStore on the stand-in: bounded, indexed, atomic', () => {
  const project = asProjectId('auth-mongo');
  const T = Date.UTC(2100, 0, 1);

  it('a user search carries maxTimeMS, and one over it answers 503', async () => {
    const db = createMingoDb();
    const store = await MongoUserStore.open(db, undefined, { searchTimeMs: 50 });
    await store.createUser(project, newUserRecord('a@x.io', {}, T));
    injectFault(db, { op: 'find', collection: 'auth_users', error: 'slow' });
    const err = await store.listUsers(project, { search: 'a', limit: 10, offset: 0 }).catch((e: unknown) => e);
    expect(toPlinthError(err)).toMatchObject({ status: 503, code: 'unavailable' });
  });

  it('deletes a user, their tokens and their mail slots all or nothing, finding the tokens through an index', async () => {
    const db = createMingoDb();
    const store = await MongoUserStore.open(db);
    const user = newUserRecord('a@x.io', {}, T);
    await store.createUser(project, user);
    await store.putOneTimeToken(project, { token_hash: 'th', kind: 'reset', user_id: user.id, expires_at: T });
    expect(await db.collection('auth_one_time_tokens').indexInformation()).toMatchObject({ project_user: [['project', 1], ['user_id', 1]] });
    injectFault(db, { op: 'deleteMany', collection: 'auth_one_time_tokens', error: new Error('connection reset') });
    await expect(store.deleteUser(project, user.id)).rejects.toThrow('connection reset');
    expect(await store.getUser(project, user.id)).toEqual(user);
    expect(await store.deleteUser(project, user.id)).toBe(true);
    expect(await store.consumeOneTimeToken(project, 'reset', 'th', T - 1)).toBeNull();
  });

  it('using a token deletes only that token: expired ones are left to the TTL index', async () => {
    const db = createMingoDb();
    const store = await MongoUserStore.open(db);
    await store.putOneTimeToken(project, { token_hash: 'old', kind: 'verify', user_id: 'usr_a', expires_at: T - 10 });
    await store.putOneTimeToken(project, { token_hash: 'th', kind: 'verify', user_id: 'usr_a', expires_at: T });
    expect(await store.consumeOneTimeToken(project, 'verify', 'th', T - 1)).toBe('usr_a');
    expect(callCount(db, 'deleteMany', 'auth_one_time_tokens')).toBe(0);
    expect(await store.consumeOneTimeToken(project, 'verify', 'old', T - 1)).toBeNull();
  });

  it('users stored before the folded name existed are found by a search after the next start', async () => {
    const db = createMingoDb();
    const user = newUserRecord('e@x.io', { display_name: 'Émile' }, T);
    await db.collection('auth_users').insertOne({ ...user, _id: `${project}/${user.id}` as never, project });
    const store = await MongoUserStore.open(db);
    expect((await store.listUsers(project, { search: 'émile', limit: 10, offset: 0 })).users).toEqual([user]);
  });
});

const MONGO_URL = process.env.MONGO_URL;
if (MONGO_URL) {
  describeUserStoreContract('mongo on a real server (MONGO_URL)', async () => {
    const client = await MongoClient.connect(MONGO_URL);
    const db = client.db(`plinth_test_${newId('')}`);
    const store = await MongoUserStore.open(db);
    return {
      store,
      cleanup: async () => {
        await db.dropDatabase();
        await client.close();
      },
    };
  });
}
