import { Redis } from 'ioredis';
import { newId } from '@plinth/shared';
import { RedisSessionStore } from '../src/store/redis-session-store';
import { deleteRedisKeys, TEST_REDIS_URL } from './redis-keys';
import { describeSessionStoreContract } from './session-store-contract';


describeSessionStoreContract('redis (real server)', async () => {
  const redis = new Redis(TEST_REDIS_URL);
  const prefix = `test:${newId('auth_')}:`;
  const store = new RedisSessionStore(redis, prefix);
  return {
    store,
    cleanup: async () => {
      await redis.quit();
      await deleteRedisKeys(prefix);
    },
  };
});
