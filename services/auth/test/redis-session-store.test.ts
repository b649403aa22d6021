import { Redis } from 'ioredis';
import { asProjectId, newId, openSqlite, RedisRevocationChecker } from '@plinth/shared';
import { RedisSessionStore } from '../src/store/redis-session-store';
import { SqliteRevocationLog } from '../src/store/sqlite-revocation-log';
import { deleteRedisKeys, TEST_REDIS_URL } from './redis-keys';
import { describeSessionStoreContract } from './session-store-contract';

describeSessionStoreContract('redis (real server)', async () => {
  const redis = new Redis(TEST_REDIS_URL);
  const prefix = `test:${newId('auth_')}:`;
  const store = new RedisSessionStore(redis, { prefix });
  return {
    store,
    cleanup: async () => {
      await redis.quit();
      await deleteRedisKeys(prefix);
    },
  };
});

// With the durable log (as the service runs it): every guarantee holds, and each revocation is logged.
describeSessionStoreContract('redis with a revocation log', async () => {
  const redis = new Redis(TEST_REDIS_URL);
  const prefix = `test:${newId('auth_')}:`;
  const store = new RedisSessionStore(redis, { prefix, log: new SqliteRevocationLog(openSqlite(':memory:')), syncPrefix: `${prefix}revocations:` });
  await store.sync!.ready();
  return {
    store,
    cleanup: async () => {
      await store.close();
      await redis.quit();
      await deleteRedisKeys(prefix);
    },
  };
});

describe('RedisSessionStore specifics', () => {
  it('with a log, every revocation is in the log before the call resolves, with its time', async () => {
    const prefix = `test:${newId('auth_')}:`;
    const redis = new Redis(TEST_REDIS_URL);
    const log = new SqliteRevocationLog(openSqlite(':memory:'));
    const store = new RedisSessionStore(redis, { prefix, log, syncPrefix: `${prefix}revocations:` });
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
    const store = new RedisSessionStore(writer, { prefix });
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
});

describe('RedisSessionStore: revocation fails closed when Redis loses data', () => {
  it('a session Redis no longer holds (restart without persistence, eviction) counts as revoked', async () => {
    const prefix = `test:${newId('auth_')}:`;
    const redis = new Redis(TEST_REDIS_URL);
    const store = new RedisSessionStore(redis, { prefix });
    const project = asProjectId('proj-one');
    const now = Date.now();
    const iat = Math.floor(now / 1000);
    try {
      await store.create(project, { id: 'ses_lost', user_id: 'usr_a', refresh_hash: 'h', now, expires_at: now + 60_000 });
      expect(await store.revocations.isRevoked(project, 'ses_lost', iat)).toBe(false);
      await deleteRedisKeys(prefix);
      expect(await store.revocations.isRevoked(project, 'ses_lost', iat)).toBe(true);
      expect(await store.revocations.isRevoked(project, 'ses_never_issued', iat)).toBe(true);
    } finally {
      await redis.quit();
      await deleteRedisKeys(prefix);
    }
  });
});
