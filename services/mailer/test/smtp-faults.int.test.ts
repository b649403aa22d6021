import net from 'node:net';
import { asProjectId, type MailJob, type MailQueue } from '@plinth/shared';
import { testMailJob } from '@plinth/shared/testing/mail-job';
import { waitFor } from '@plinth/shared/testing/wait-for';
import { asGateway } from './support/internal-request';
import { SmtpCapture } from './support/smtp-capture';
import { metricValue, removeDataDir, REDIS_URL, startMailer, uniqueBullQueue, type MailerFixture } from './support/mailer-fixture';

const project = asProjectId('acme');

function verifyJob(to = 'ada@example.com'): MailJob {
  return testMailJob({ project, kind: 'verify', to });
}

describe('mailer faults over real SMTP, jobs through BullMQ (real Redis)', () => {
  let smtp: SmtpCapture;
  let queue: MailQueue;
  let disposeQueue: () => Promise<void>;
  let mailer: MailerFixture;

  async function start(attempts: number): Promise<void> {
    ({ queue, dispose: disposeQueue } = uniqueBullQueue({ attempts, backoffMs: 20 }));
    mailer = await startMailer({ REDIS_URL, SMTP_URL: smtp.url }, { queue });
  }

  const settled = () =>
    waitFor('the queue to settle', async () => {
      const counts = await queue.counts();
      return counts.waiting + counts.active === 0;
    });

  beforeEach(async () => {
    smtp = new SmtpCapture();
    await smtp.start(0);
  });

  afterEach(async () => {
    await mailer.service.close();
    await disposeQueue();
    await smtp.stop();
    removeDataDir(mailer.dataDir);
  });

  it('retries when the server refuses the recipient, then the data, and delivers exactly once', async () => {
    await start(5);
    smtp.refusals.push('rcpt', 'data', 'rcpt');
    const job = verifyJob();
    await queue.enqueue(job);
    await waitFor('the mail', () => smtp.messages.length === 1);
    await settled();
    expect(smtp.refusals).toEqual([]);
    expect(smtp.messages).toHaveLength(1);
    expect(smtp.messages[0]!.messageId).toBe(`<${job.id}@localhost>`);
    const app = mailer.service.app;
    expect(await metricValue(app, 'plinth_mail_retried_total', { kind: 'verify' })).toBe(3);
    expect(await metricValue(app, 'plinth_mail_sent_total', { kind: 'verify' })).toBe(1);
    expect(await metricValue(app, 'plinth_mail_failed_total')).toBe(0);
    expect((await asGateway(app, project).get('/v1/projects/acme/mail/failed').expect(200)).body).toEqual({ jobs: [] });
  });

  it('dead-letters a job while the server stays down; a retry through the API delivers it once it is back', async () => {
    await start(3);
    await smtp.stop();
    const job = verifyJob('grace@example.com');
    await queue.enqueue(job);
    const app = mailer.service.app;

    const failed = await waitFor('the dead letter', async () => {
      const res = await asGateway(app, project).get('/v1/projects/acme/mail/failed').expect(200);
      return res.body.jobs.length === 1 ? res.body : undefined;
    });
    expect(failed).toEqual({
      jobs: [
        {
          id: job.id,
          kind: 'verify',
          to: 'grace@example.com',
          attempts: 3,
          error: expect.stringMatching(/ECONNREFUSED/),
          created_at: job.created_at,
          failed_at: expect.any(String),
        },
      ],
    });
    expect(JSON.stringify(failed)).not.toContain((job.data as { token: string }).token);
    expect(await metricValue(app, 'plinth_mail_failed_total', { kind: 'verify' })).toBe(1);
    expect(await metricValue(app, 'plinth_mail_retried_total', { kind: 'verify' })).toBe(2);
    expect(await metricValue(app, 'plinth_mail_queue_jobs', { state: 'failed' })).toBe(1);
    // Other projects see nothing of it and cannot retry it.
    expect((await asGateway(app, 'other').get('/v1/projects/other/mail/failed').expect(200)).body).toEqual({ jobs: [] });
    await asGateway(app, 'other').post(`/v1/projects/other/mail/failed/${job.id}/retry`).expect(404);

    await smtp.start();
    const retried = await asGateway(app, project).post(`/v1/projects/acme/mail/failed/${job.id}/retry`).expect(200);
    expect(retried.body).toEqual({ retried: true, id: job.id });
    await waitFor('the mail', () => smtp.messages.length === 1);
    await settled();
    expect(smtp.messages.map((m) => m.to)).toEqual([['grace@example.com']]);
    expect((await asGateway(app, project).get('/v1/projects/acme/mail/failed').expect(200)).body).toEqual({ jobs: [] });
    // Retrying a job that is no longer a dead letter is a 404.
    const again = await asGateway(app, project).post(`/v1/projects/acme/mail/failed/${job.id}/retry`).expect(404);
    expect(again.body).toMatchObject({ error: 'not_found' });
  });

  it('gives up on a server that accepts the connection but never answers, after PLINTH_SMTP_TIMEOUT_MS, and dead-letters the job', async () => {
    // Accepts and holds every connection without a greeting: a hung server, not a refusing one.
    const held: net.Socket[] = [];
    const silent = net.createServer((socket) => void held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      ({ queue, dispose: disposeQueue } = uniqueBullQueue({ attempts: 2, backoffMs: 20 }));
      const port = (silent.address() as net.AddressInfo).port;
      mailer = await startMailer({ REDIS_URL, SMTP_URL: `smtp://127.0.0.1:${port}`, PLINTH_SMTP_TIMEOUT_MS: '300' }, { queue });
      const job = verifyJob('hung@example.com');
      await queue.enqueue(job);
      const app = mailer.service.app;
      const failed = await waitFor('the dead letter', async () => {
        const res = await asGateway(app, project).get('/v1/projects/acme/mail/failed').expect(200);
        return res.body.jobs.length === 1 ? res.body : undefined;
      });
      expect(failed.jobs[0]).toMatchObject({ id: job.id, attempts: 2, error: expect.stringMatching(/greeting|timeout/i) });
      expect(held.length).toBeGreaterThanOrEqual(2);
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('keeps dead letters behind the secret key', async () => {
    await start(1);
    const app = mailer.service.app;
    const res = await asGateway(app, project, 'public').get('/v1/projects/acme/mail/failed').expect(403);
    expect(res.body).toMatchObject({ error: 'forbidden' });
    await asGateway(app, project, 'public').post('/v1/projects/acme/mail/failed/mail_x/retry').expect(403);
    await asGateway(app, project).post('/v1/projects/acme/mail/failed/not:an-id/retry').expect(404);
  });

  it('has no dev mailbox when mail goes out over SMTP', async () => {
    await start(1);
    const res = await asGateway(mailer.service.app, project).get('/v1/projects/acme/mailbox').expect(404);
    expect(res.body).toMatchObject({ error: 'not_found' });
  });
});
