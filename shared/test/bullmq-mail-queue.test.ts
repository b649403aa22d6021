import { BullMqMailQueue, newId } from '@plinth/shared';
import { describeMailQueueContract } from './mail-queue-contract';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describeMailQueueContract('bullmq (real Redis)', async () => {
  const queueName = newId('test-mail-');
  return {
    open: (opts) => new BullMqMailQueue({ ...opts, redisUrl: REDIS_URL, queueName }),
    cleanup: async () => {
      const janitor = new BullMqMailQueue({ attempts: 1, backoffMs: 1, redisUrl: REDIS_URL, queueName });
      await janitor.obliterate();
      await janitor.close();
    },
  };
});
