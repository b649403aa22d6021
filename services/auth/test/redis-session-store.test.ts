import { Redis } from 'ioredis';
import { asProjectId, newId, RedisRevocationChecker } from '@plinth/shared';
import { RedisSessionStore } from '../src/store/redis-session-store';
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

describe('RedisSessionStore specifics', () => {
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
