import request from 'supertest';
import { asProjectId, createMailQueueFromConfig, type MailJob, type MailQueue } from '@plinth/shared';
import { testMailJob as job } from '@plinth/shared/testing/mail-job';
import { waitFor } from '@plinth/shared/testing/wait-for';
import { asGateway } from './support/internal-request';
import { makeDataDir, metricValue, removeDataDir, startMailer, type MailerFixture } from './support/mailer-fixture';

const project = asProjectId('acme');

const mailboxOf = async (mailer: MailerFixture, query = '') =>
  (await asGateway(mailer.service.app, project).get(`/v1/projects/acme/mailbox${query}`).expect(200)).body as {
    messages: { id: string; to: string; kind: string }[];
  };

describe('standalone mailer: embedded SQLite outbox and dev mailbox', () => {
  let dataDir: string;
  const cleanups: (() => Promise<void>)[] = [];

  beforeEach(() => {
    dataDir = makeDataDir();
  });

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    removeDataDir(dataDir);
  });

  it('loses nothing when the worker is stopped mid-flight and the outbox reopened: each job delivered once', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let lookups = 0;
    const first = await startMailer(
      { PLINTH_DATA_DIR: dataDir, PLINTH_MAIL_CONCURRENCY: '2' },
      {
        mailSettings: {
          forProject: async () => {
            lookups += 1;
            await gate;
            return null;
          },
        },
      },
    );
    // Another instance on the same outbox file, as auth in a separate process would hold.
    const producer = createMailQueueFromConfig(first.config);
    cleanups.push(() => producer.close());
    const jobs = Array.from({ length: 5 }, (_, i) => job({ to: `user${i}@example.com` }));
    for (const j of jobs) await producer.enqueue(j);

    await waitFor('two deliveries in flight', () => lookups === 2);
    let closed = false;
    const closing = first.service.close().then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closed).toBe(false);
    release();
    await closing;
    expect(await producer.counts()).toEqual({ waiting: 3, active: 0, failed: 0 });
    expect(await metricValue(first.service.app, 'plinth_mail_sent_total', { transport: 'mailbox' })).toBe(2);

    const second = await startMailer({ PLINTH_DATA_DIR: dataDir });
    cleanups.push(() => second.service.close());
    const { messages } = await waitFor('all five messages', async () => {
      const box = await mailboxOf(second);
      return box.messages.length === 5 ? box : undefined;
    });
    expect(messages.map((m) => m.id).sort()).toEqual(jobs.map((j) => j.id).sort());
    await waitFor('the outbox to drain', async () => (await producer.counts()).waiting === 0);
    expect(await metricValue(second.service.app, 'plinth_mail_sent_total', { transport: 'mailbox' })).toBe(3);
    expect(lookups).toBe(2);
  });

  it('answers /readyz, and close() stops consuming but leaves a queue it was given open', async () => {
    const queue = createMailQueueFromConfig({
      PLINTH_DATA_DIR: dataDir,
      PLINTH_MAIL_ATTEMPTS: 3,
      PLINTH_MAIL_BACKOFF_MS: 20,
      PLINTH_MAIL_POLL_MS: 10,
    });
    cleanups.push(() => queue.close());
    const mailer = await startMailer({ PLINTH_DATA_DIR: dataDir }, { queue });
    const ready = await request(mailer.service.app).get('/readyz').expect(200);
    expect(ready.body).toEqual({ status: 'ready', service: 'mailer' });
    await mailer.service.close();
    await queue.enqueue(job());
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await queue.counts()).toEqual({ waiting: 1, active: 0, failed: 0 });
  });

  describe('the dev mailbox API', () => {
    let queue: MailQueue;
    let mailer: MailerFixture;

    /** Enqueues through the queue shared with the service (standalone wiring) and waits for delivery. */
    async function deliver(j: MailJob): Promise<void> {
      await queue.enqueue(j);
      await waitFor('the message', async () => (await mailboxOf(mailer)).messages.some((m) => m.id === j.id));
    }

    beforeEach(async () => {
      queue = createMailQueueFromConfig({
        PLINTH_DATA_DIR: dataDir,
        PLINTH_MAIL_ATTEMPTS: 3,
        PLINTH_MAIL_BACKOFF_MS: 20,
        PLINTH_MAIL_POLL_MS: 10,
      });
      mailer = await startMailer({ PLINTH_DATA_DIR: dataDir, PLINTH_PUBLIC_URL: 'https://app.acme.test' }, { queue });
      cleanups.push(() => queue.close(), () => mailer.service.close());
    });

    it('returns delivered messages newest first, with their kind and token or code', async () => {
      const verify = job({ to: 'ada@example.com' });
      const otp = job({ kind: 'otp', to: 'grace@example.com', data: { code: '123456' } });
      await deliver(verify);
      await deliver(otp);
      const res = await asGateway(mailer.service.app, project).get('/v1/projects/acme/mailbox').expect(200);
      expect(res.body).toEqual({
        messages: [
          {
            id: otp.id,
            to: 'grace@example.com',
            subject: 'Your acme sign-in code: 123456',
            text: expect.stringContaining('123456'),
            html: expect.stringContaining('<strong>123456</strong>'),
            kind: 'otp',
            data: { code: '123456' },
            created_at: expect.any(String),
          },
          {
            id: verify.id,
            to: 'ada@example.com',
            subject: 'Confirm your e-mail address for acme',
            text: expect.stringContaining(`https://app.acme.test/v1/projects/acme/auth/action?token=${(verify.data as { token: string }).token}&type=verify`),
            html: expect.stringContaining('href="https://app.acme.test/v1/projects/acme/auth/action?token='),
            kind: 'verify',
            data: verify.data,
            created_at: expect.any(String),
          },
        ],
      });
      expect(Date.parse(res.body.messages[0].created_at)).toBeGreaterThanOrEqual(Date.parse(res.body.messages[1].created_at));
    });

    it('filters by ?to= (case-insensitively) and honours ?limit=', async () => {
      const first = job({ to: 'ada@example.com' });
      const other = job({ to: 'grace@example.com' });
      const second = job({ kind: 'reset', to: 'Ada@Example.com' });
      await deliver(first);
      await deliver(other);
      await deliver(second);
      expect((await mailboxOf(mailer, '?to=ada%40example.com')).messages.map((m) => m.id)).toEqual([second.id, first.id]);
      expect((await mailboxOf(mailer, '?to=nobody%40example.com')).messages).toEqual([]);
      expect((await mailboxOf(mailer, '?limit=2')).messages.map((m) => m.id)).toEqual([second.id, other.id]);
      expect((await mailboxOf(mailer, '?to=')).messages).toHaveLength(3);
      // Another project's mailbox does not see acme's mail.
      const res = await asGateway(mailer.service.app, 'other').get('/v1/projects/other/mailbox').expect(200);
      expect(res.body).toEqual({ messages: [] });
    });

    it('refuses bad parameters with a 400 naming them, and a public key with a 403', async () => {
      const app = mailer.service.app;
      const badLimit = await asGateway(app, project).get('/v1/projects/acme/mailbox?limit=0').expect(400);
      expect(badLimit.body).toMatchObject({ error: 'invalid_request', details: { limit: expect.any(String) } });
      await asGateway(app, project).get('/v1/projects/acme/mailbox?limit=1001').expect(400);
      await asGateway(app, project).get('/v1/projects/acme/mailbox?limit=ten').expect(400);
      const twoTo = await asGateway(app, project).get('/v1/projects/acme/mailbox?to=a%40x.io&to=b%40x.io').expect(400);
      expect(twoTo.body).toMatchObject({ error: 'invalid_request', details: { to: expect.any(String) } });
      const publicKey = await asGateway(app, project, 'public').get('/v1/projects/acme/mailbox').expect(403);
      expect(publicKey.body).toMatchObject({ error: 'forbidden' });
    });
  });
});
