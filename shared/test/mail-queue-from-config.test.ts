import Joi from 'joi';
import { BullMqMailQueue, createMailQueueFromConfig, loadConfig, mailQueueConfigKeys, newId } from '@plinth/shared';
import { testMailJob } from '@plinth/shared/testing/mail-job';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const schema = Joi.object(mailQueueConfigKeys);

describe('PLINTH_MAIL_QUEUE (the BullMQ queue name from the environment)', () => {
  it('puts jobs on the named queue, where a consumer of that name finds them', async () => {
    const name = newId('test-cfg-');
    const config = loadConfig(schema, { REDIS_URL, PLINTH_MAIL_QUEUE: name });
    const producer = createMailQueueFromConfig(config);
    const sameName = new BullMqMailQueue({ redisUrl: REDIS_URL, queueName: name, attempts: 1, backoffMs: 10 });
    try {
      await producer.enqueue(testMailJob());
      expect((await sameName.counts()).waiting).toBe(1);
    } finally {
      await sameName.obliterate();
      await sameName.close();
      await producer.close();
    }
  });

  it('is optional, and a name BullMQ cannot use is refused naming the variable', () => {
    expect(loadConfig(schema, {}).PLINTH_MAIL_QUEUE).toBeUndefined();
    expect(() => loadConfig(schema, { PLINTH_MAIL_QUEUE: 'a:b' })).toThrow(/PLINTH_MAIL_QUEUE/);
  });
});
