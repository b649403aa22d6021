import { Redis } from 'ioredis';
import { newId } from '../src/ids';
import { createMailQueueFromConfig } from '../src/mail-queue/from-config';
import type { MailQueue } from '../src/mail-queue/mail-queue';
import { testMailJob } from '../src/testing/mail-job';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('createMailQueueFromConfig: PLINTH_MAIL_QUEUE', () => {
  const opened: MailQueue[] = [];
  const open = (name?: string) => {
    const q = createMailQueueFromConfig({
      REDIS_URL,
      PLINTH_DATA_DIR: '/nonexistent',
      PLINTH_MAIL_ATTEMPTS: 1,
      PLINTH_MAIL_BACKOFF_MS: 10,
      PLINTH_MAIL_POLL_MS: 10,
      PLINTH_MAIL_QUEUE: name,
    });
    opened.push(q);
    return q;
  };
  const name = `test-${newId('q')}`;
  afterAll(async () => {
    for (const q of opened) await q.close();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`bull:${name}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('puts producers and consumers of the same name on one queue, and keeps other names apart', async () => {
    await open(name).enqueue(testMailJob());
    expect((await open(name).counts()).waiting).toBe(1);
    expect((await open(`${name}-other`).counts()).waiting).toBe(0);
  });
});
