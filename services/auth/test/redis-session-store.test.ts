import { Redis } from 'ioredis';
import { asProjectId, newId, openSqlite, RedisRevocationChecker } from '@plinth/shared';
import { createMingoDb } from '@plinth/shared/testing/mingo-db';
import { MongoRevocationLog } from '../src/store/mongo-revocation-log';
import { MongoSessionFamilies } from '../src/store/mongo-session-families';
import { RedisSessionStore } from '../src/store/redis-session-store';
import type { RevocationLog } from '../src/store/revocation-log';
import type { SessionFamilies } from '../src/store/session-families';
import { SqliteRevocationLog } from '../src/store/sqlite-revocation-log';
import { SqliteSessionFamilies } from '../src/store/sqlite-session-families';
import { deleteRedisKeys, TEST_REDIS_URL } from './redis-keys';
import { describeSessionStoreContract } from './session-store-contract';

const sqliteFamilies = () => new SqliteSessionFamilies(openSqlite(':memory:'));

describeSessionStoreContract('redis cache over SQLite (real server)', async () => {
  const redis = new Redis(TEST_REDIS_URL);
  const prefix = `test:${newId('auth_')}:`;
  const store = new RedisSessionStore(redis, { prefix, durable: sqliteFamilies() });
  return {
    store,
    cleanup: async () => {
      await redis.quit();
      await deleteRedisKeys(prefix);
    },
  };
});

/** A Redis session cache over `durable` families and revocation `log`, as the service runs it; synced before it is used. */
async function cacheOver(stores: () => Promise<{ durable: SessionFamilies; log: RevocationLog }>) {
  const redis = new Redis(TEST_REDIS_URL);
  const prefix = `test:${newId('auth_')}:`;
  const store = new RedisSessionStore(redis, { prefix, ...(await stores()), syncPrefix: `${prefix}revocations:` });
  await store.sync!.ready();
  return {
    store,
    cleanup: async () => {
      await store.close();
      await redis.quit();
      await deleteRedisKeys(prefix);
    },
  };
}

// With the durable log (as the service runs it): every guarantee holds, and each revocation is logged.
describeSessionStoreContract('redis cache over SQLite, with a revocation log', () =>
  cacheOver(async () => ({ durable: sqliteFamilies(), log: new SqliteRevocationLog(openSqlite(':memory:')) })),
);

// Production's pairing: the families and the log in MongoDB (here the mingo stand-in).
describeSessionStoreContract('redis cache over MongoDB (mingo stand-in), with a revocation log', () =>
  cacheOver(async () => {
    const db = createMingoDb();
    return { durable: await MongoSessionFamilies.open(db), log: await MongoRevocationLog.open(db) };
  }),
);

describe('RedisSessionStore specifics', () => {
  it('with a log, every revocation is in the log before the call resolves, with its time', async () => {
    const prefix = `test:${newId('auth_')}:`;
    const redis = new Redis(TEST_REDIS_URL);
    const log = new SqliteRevocationLog(openSqlite(':memory:'));
    const store = new RedisSessionStore(redis, { prefix, durable: sqliteFamilies(), log, syncPrefix: `${prefix}revocations:` });
    const project = asProjectId('proj-one');
    const now = Date.now();
    try {
      for (const sid of ['ses_1', 'ses_2', 'ses_3']) {
        await store.create(project, { id: sid, user_id: sid === 'ses_3' ? 'usr_b' : 'usr_a', refresh_hash: `h-${sid}`, now, expires_at: now + 60_000 });
      }
      await store.revokeUser(project, 'usr_a', now + 1);
      await store.revokeByRefreshHash(project, 'h-ses_3', now + 2);
      expect(await log.since(0, 10)).toEqual([
        { project, sid: 'ses_1', at: now + 1 },
        { project, sid: 'ses_2', at: now + 1 },
        { project, sid: 'ses_3', at: now + 2 },
      ]);
    } finally {
      await store.close();
      await redis.quit();
      await deleteRedisKeys(prefix);
    }
  });

  it('another process reading with its own connection sees a revocation as soon as it is made', async () => {
    const prefix = `test:${newId('auth_')}:`;
    const writer = new Redis(TEST_REDIS_URL);
    const reader = new Redis(TEST_REDIS_URL);
    const store = new RedisSessionStore(writer, { prefix, durable: sqliteFamilies() });
    const elsewhere = new RedisRevocationChecker(reader, prefix);
    const project = asProjectId('proj-one');
    const now = Date.now();
    const iat = Math.floor(now / 1000);
    await store.create(project, { id: 'ses_x', user_id: 'usr_a', refresh_hash: 'h', now, expires_at: now + 60_000 });
    expect(await elsewhere.isRevoked(project, 'ses_x', iat)).toBe(false);
    await store.revokeUser(project, 'usr_a', now);
    expect(await elsewhere.isRevoked(project, 'ses_x', iat)).toBe(true);
    const ttl = await reader.ttl(`${prefix}revoked:proj-one:ses_x`);
    expect(ttl).toBeGreaterThan(86_400);
    expect(ttl).toBeLessThanOrEqual(86_460);
    await writer.quit();
    await reader.quit();
    await deleteRedisKeys(prefix);
  });

  it('reading a session Redis holds makes no durable read', async () => {
    const prefix = `test:${newId('auth_')}:`;
    const redis = new Redis(TEST_REDIS_URL);
    const families = sqliteFamilies();
    let durableReads = 0;
    const counting: SessionFamilies = Object.assign(Object.create(families) as SessionFamilies, {
      getActive: (...args: Parameters<SessionFamilies['getActive']>) => {
        durableReads++;
        return families.getActive(...args);
      },
    });
    const store = new RedisSessionStore(redis, { prefix, durable: counting });
    const project = asProjectId('proj-one');
    const now = Date.now();
    try {
      await store.create(project, { id: 'ses_hot', user_id: 'usr_a', refresh_hash: 'h', now, expires_at: now + 60_000 });
      for (let i = 0; i < 5; i++) expect(await store.getActive(project, 'ses_hot', now + i)).toMatchObject({ id: 'ses_hot' });
      expect(durableReads).toBe(0);
      // Lost from Redis (eviction, a data set that lacks it): one durable read puts it back.
      await redis.del(`${prefix}sess:proj-one:ses_hot`);
      expect(await store.getActive(project, 'ses_hot', now + 10)).toMatchObject({ id: 'ses_hot', user_id: 'usr_a' });
      expect(await store.getActive(project, 'ses_hot', now + 11)).toMatchObject({ id: 'ses_hot' });
      expect(durableReads).toBe(1);
      expect(await store.revocations.isRevoked(project, 'ses_hot', Math.floor(now / 1000))).toBe(false);
    } finally {
      await redis.quit();
      await deleteRedisKeys(prefix);
    }
  });

  it('a revoked session lost from Redis is never read back as live, nor cached again', async () => {
    const prefix = `test:${newId('auth_')}:`;
    const redis = new Redis(TEST_REDIS_URL);
    const store = new RedisSessionStore(redis, { prefix, durable: sqliteFamilies() });
    const project = asProjectId('proj-one');
    const now = Date.now();
    const iat = Math.floor(now / 1000);
    try {
      await store.create(project, { id: 'ses_out', user_id: 'usr_a', refresh_hash: 'h-out', now, expires_at: now + 60_000 });
      await store.revokeByRefreshHash(project, 'h-out', now + 1);
      await deleteRedisKeys(prefix);
      expect(await store.getActive(project, 'ses_out', now + 2)).toBeNull();
      expect(await store.revocations.isRevoked(project, 'ses_out', iat)).toBe(true);
      expect(await store.rotate(project, { presented_hash: 'h-out', next_hash: 'h2', next_grace: 'g', now: now + 3, next_expires_at: now + 60_000, grace_ms: 10_000 })).toEqual({
        outcome: 'invalid',
      });
      // Revoked while Redis did not hold it: the marker stops any later write-back.
      await store.create(project, { id: 'ses_b', user_id: 'usr_b', refresh_hash: 'h-b', now, expires_at: now + 60_000 });
      await redis.del(`${prefix}sess:proj-one:ses_b`);
      expect(await store.revoke(project, 'ses_b', now + 4)).toBe(true);
      expect(await store.getActive(project, 'ses_b', now + 5)).toBeNull();
      expect(await redis.exists(`${prefix}sess:proj-one:ses_b`)).toBe(0);
      expect(await store.revocations.isRevoked(project, 'ses_b', iat)).toBe(true);
    } finally {
      await redis.quit();
      await deleteRedisKeys(prefix);
    }
  });
});

describe.each([
  ['SQLite', async () => ({ durable: sqliteFamilies(), log: new SqliteRevocationLog(openSqlite(':memory:')) })],
  [
    'MongoDB (mingo stand-in)',
    async () => {
      const db = createMingoDb();
      return { durable: await MongoSessionFamilies.open(db), log: await MongoRevocationLog.open(db) };
    },
  ],
])('RedisSessionStore over %s: a Redis emptied is rebuilt from the durable store', (_name, durableStores) => {
  const project = asProjectId('proj-one');

  it('live sessions read, refresh and detect reuse as before; revoked ones stay revoked', async () => {
    const prefix = `test:${newId('auth_')}:`;
    const redis = new Redis(TEST_REDIS_URL);
    const syncPrefix = `${prefix}revocations:`;
    const { durable, log } = await durableStores();
    const store = new RedisSessionStore(redis, { prefix, durable, log, syncPrefix });
    const reader = new Redis(TEST_REDIS_URL);
    const now = Date.now();
    const iat = Math.floor(now / 1000);
    const rot = (presented: string, next: string, at: number) => ({
      presented_hash: presented,
      next_hash: next,
      next_grace: `g-${next}`,
      now: at,
      next_expires_at: at + 3_600_000,
      grace_ms: 10_000,
    });
    try {
      await store.sync!.ready();
      for (const u of ['a', 'b', 'c', 'd']) await store.create(project, { id: `ses_${u}`, user_id: `usr_${u}`, refresh_hash: `h-${u}1`, now, expires_at: now + 60_000 });
      expect((await store.rotate(project, rot('h-b1', 'h-b2', now + 1000))).outcome).toBe('rotated');
      expect((await store.rotate(project, rot('h-d1', 'h-d2', now + 1000))).outcome).toBe('rotated');
      await store.revokeByRefreshHash(project, 'h-c1', now + 2000);

      // Every key gone, the sync keys with them: the data set is as a Redis restarted empty.
      await deleteRedisKeys(prefix);
      const other = new RedisRevocationChecker(reader, prefix);
      expect(await other.isRevoked(project, 'ses_a', iat)).toBe(true); // nothing there yet

      // The store notices within a second that its data set lost the sync keys, and rebuilds it.
      for (let i = 0; i < 100 && (await redis.get(`${syncPrefix}synced`)) === null; i++) await new Promise((r) => setTimeout(r, 50));
      await store.sync!.ready();
      // Other services read Redis only: they see the rebuilt sessions with their rotated expiry.
      for (const sid of ['ses_a', 'ses_b', 'ses_d']) expect(await other.isRevoked(project, sid, iat)).toBe(false);
      expect(await other.isRevoked(project, 'ses_c', iat)).toBe(true);
      expect(await redis.hget(`${prefix}sess:proj-one:ses_b`, 'expires_at')).toBe(String(now + 1000 + 3_600_000));
      expect(await store.getActive(project, 'ses_c', now + 3000)).toBeNull();
      // The refresh tokens: the current one rotates, the parent within grace gets the grace blob,
      // an older one revokes the family, the revoked family's token is invalid.
      expect(await store.rotate(project, rot('h-a1', 'h-a2', now + 3000))).toMatchObject({ outcome: 'rotated', session: { id: 'ses_a' } });
      expect(await store.rotate(project, rot('h-a1', 'h-ax', now + 4000))).toMatchObject({ outcome: 'grace', grace: 'g-h-a2' });
      // b's first token, rotated at +1 s, presented past the 10 s grace window.
      expect(await store.rotate(project, rot('h-b1', 'h-bx', now + 20_000))).toMatchObject({ outcome: 'reused' });
      expect(await other.isRevoked(project, 'ses_b', iat)).toBe(true);
      expect(await store.rotate(project, rot('h-b2', 'h-by', now + 20_000))).toEqual({ outcome: 'invalid' });
      expect(await store.rotate(project, rot('h-c1', 'h-cx', now + 20_000))).toEqual({ outcome: 'invalid' });
      expect(await store.rotate(project, rot('h-d2', 'h-d3', now + 20_000))).toMatchObject({ outcome: 'rotated' });
    } finally {
      await reader.quit();
      await store.close();
      await redis.quit();
      await deleteRedisKeys(prefix);
    }
  });
});
