import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { RedisEventBus } from '@plinth/shared';
import { describeEventBusContract } from './event-bus-contract';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

// Three shards (projects apart), and one (every project in the same stream: purge and trim
// must skip the other projects' entries).
for (const shards of [3, 1]) {
  describeEventBusContract(`Redis Streams, ${shards} shard(s)`, async (retention) => {
    const prefix = `test:events:${randomBytes(6).toString('hex')}:`;
    const redis = new Redis(REDIS_URL);
    const opts = { prefix, shards, retention, blockMs: 200 };
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
}
