import { Redis } from 'ioredis';
import { newId } from '@plinth/shared';
import { RedisSessionStore } from '../src/store/redis-session-store';
import { describeSessionStoreContract } from './session-store-contract';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describeSessionStoreContract('redis (real server)', async () => {
  const redis = new Redis(REDIS_URL);
  const prefix = `test:${newId('auth_')}:`;
  const store = new RedisSessionStore(redis, prefix);
  return {
    store,
    cleanup: async () => {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    },
  };
});
