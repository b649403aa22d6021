import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { RedisEventBus } from '@plinth/shared';
import { describeEventBusContract } from './event-bus-contract';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describeEventBusContract('Redis Streams', async (retention) => {
  const prefix = `test:events:${randomBytes(6).toString('hex')}:`;
  const redis = new Redis(REDIS_URL);
  const opts = { prefix, shards: 3, retention, blockMs: 200 };
  const bus = new RedisEventBus({ ...opts, redis });
  const others: Redis[] = [];
  return {
    bus,
    reopen: async () => {
      const r = new Redis(REDIS_URL);
      others.push(r);
      return new RedisEventBus({ ...opts, redis: r });
    },
    cleanUp: async () => {
      await bus.close();
      await redis.del(...bus.keys());
      redis.disconnect();
      for (const r of others) r.disconnect();
    },
  };
});
