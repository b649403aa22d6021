import {
  BullMqMailQueue,
  createMailQueueFromConfig,
  loadConfig,
  type MailJob,
  type MailQueue,
} from '@plinth/shared';
import { authConfigSchema } from '../../src/config';
import { TEST_REDIS_URL } from '../redis-keys';
import { useAuthTestService } from './auth-test-service';
import { itLeakedNoSecrets } from './no-secrets';

const PASSWORD = 'mail queue password';

/** Resolves with the first job `queue` delivers to its consumer. */
function nextJob(queue: MailQueue): Promise<MailJob> {
  return new Promise((resolve) => {
    queue.start(async (job) => resolve(job));
  });
}

describe.each([
  ['embedded outbox (SQLite, standalone)', {} as { [k: string]: string }],
  ['BullMQ (real Redis, cluster)', { REDIS_URL: TEST_REDIS_URL }],
])('Auth enqueues its mails on the configured MailQueue: %s', (_name, env) => {
  const t = useAuthTestService({ ...env, PLINTH_MAIL_POLL_MS: '20' }, { configuredMailQueue: true });
  let consumer: MailQueue | null = null;

  afterEach(async () => {
    if (consumer instanceof BullMqMailQueue) await consumer.obliterate();
    await consumer?.close();
    consumer = null;
  });

  /** The mailer's side: a consumer of the same queue, built from the same configuration. */
  function mailerQueue(): MailQueue {
    const config = loadConfig(authConfigSchema, {
      PLINTH_INTERNAL_SECRET: 'x'.repeat(32),
      PLINTH_DATA_DIR: t.dataDir,
      PLINTH_MAIL_POLL_MS: '20',
      ...env,
    });
    return createMailQueueFromConfig(config, { queueName: t.mailQueueName });
  }

  it('sign-up puts a verify job with the link token on the queue the mailer consumes', async () => {
    const p = await t.enabledProject();
    consumer = mailerQueue();
    const delivered = nextJob(consumer);
    const up = await t.call({ method: 'post', path: '/auth/signup', project: p, body: { email: 'ada@example.com', password: PASSWORD } });
    expect(up.status).toBe(201);
    const job = await delivered;
    expect(job).toEqual({
      id: expect.stringMatching(/^mail_/),
      project: p,
      kind: 'verify',
      to: 'ada@example.com',
      data: { token: expect.any(String) },
      created_at: expect.any(String),
    });
    const confirm = await t.call({ method: 'post', path: '/auth/verify/confirm', project: p, body: job.data });
    expect(confirm.status).toBe(200);
    expect(confirm.body.user.email_verified).toBe(true);
  });

  it('an OTP request puts an otp job with the code on the queue', async () => {
    const p = await t.enabledProject({ otp_creates_users: true });
    consumer = mailerQueue();
    const delivered = nextJob(consumer);
    await t.call({ method: 'post', path: '/auth/otp/request', project: p, body: { email: 'otp@example.com' } });
    const job = await delivered;
    expect(job).toMatchObject({ kind: 'otp', to: 'otp@example.com', data: { code: expect.stringMatching(/^\d{6}$/) } });
    const s = await t.call({ method: 'post', path: '/auth/otp/redeem', project: p, body: { email: 'otp@example.com', ...job.data } });
    expect(s.status).toBe(200);
  });

  itLeakedNoSecrets(t);
});
