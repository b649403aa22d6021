import { Router } from 'express';
import {
  createLogger,
  createMailQueueFromConfig,
  createServiceApp,
  requireSecretKey,
  serve,
  type MailQueue,
  type Served,
} from '@plinth/shared';
import { testMailJob } from '@plinth/shared/testing/mail-job';
import { waitFor } from '@plinth/shared/testing/wait-for';
import { asGateway, TEST_INTERNAL_SECRET } from './support/internal-request';
import { makeDataDir, removeDataDir, startMailer, type MailerFixture } from './support/mailer-fixture';
import { SmtpCapture } from './support/smtp-capture';

/** A stand-in auth service: the real chassis (internal auth) with the settings route only. */
async function startFakeAuth(settings: Map<string, { mail_from: string | null; redirect_url: string | null }>) {
  const routes = Router();
  routes.get('/v1/projects/:project/settings/auth', (_req, res) => {
    const { project } = requireSecretKey(res);
    res.json({ enabled: true, send_verification_on_signup: true, mail_from: null, redirect_url: null, ...settings.get(project) });
  });
  const logger = createLogger('fake-auth', 'silent');
  const app = createServiceApp({ name: 'auth', internalSecret: TEST_INTERNAL_SECRET, logger, routes, logRequests: false });
  return serve(app, { port: 0, host: '127.0.0.1', logger, graceMs: 0 });
}

describe('mail settings read from the auth service (AUTH_URL)', () => {
  let dataDir: string;
  let smtp: SmtpCapture;
  let auth: Served;
  let queue: MailQueue;
  let mailer: MailerFixture;
  const settings = new Map<string, { mail_from: string | null; redirect_url: string | null }>();

  beforeEach(async () => {
    dataDir = makeDataDir();
    smtp = new SmtpCapture();
    await smtp.start(0);
    settings.clear();
    auth = await startFakeAuth(settings);
    queue = createMailQueueFromConfig({ PLINTH_DATA_DIR: dataDir, PLINTH_MAIL_ATTEMPTS: 2, PLINTH_MAIL_BACKOFF_MS: 10, PLINTH_MAIL_POLL_MS: 10 });
    mailer = await startMailer(
      {
        PLINTH_DATA_DIR: dataDir,
        SMTP_URL: smtp.url,
        AUTH_URL: `http://127.0.0.1:${auth.port}`,
        PLINTH_MAIL_FROM: 'Default <default@plinth.test>',
        PLINTH_PUBLIC_URL: 'https://default.test/',
      },
      { queue },
    );
  });

  afterEach(async () => {
    await mailer.service.close();
    await queue.close();
    await auth.shutdown();
    await smtp.stop();
    removeDataDir(dataDir);
  });

  it("uses the project's mail_from and redirect_url, the defaults where auth has none, and changes at once", async () => {
    settings.set('branded', { mail_from: 'Branded <hi@branded.test>', redirect_url: 'https://branded.test/cb' });
    const branded = testMailJob({ project: 'branded', to: 'one@example.com', data: { token: 'tok-one' } });
    const plain = testMailJob({ project: 'acme', to: 'two@example.com', data: { token: 'tok-two' } });
    await queue.enqueue(branded);
    await queue.enqueue(plain);
    await waitFor('two mails', () => smtp.messages.length === 2);
    const byTo = (to: string) => smtp.messages.find((m) => m.to[0] === to)!;
    expect(byTo('one@example.com').from).toBe('hi@branded.test');
    expect(byTo('one@example.com').text).toContain('https://branded.test/cb?token=tok-one&type=verify');
    expect(byTo('two@example.com').from).toBe('default@plinth.test');
    expect(byTo('two@example.com').text).toContain('https://default.test/v1/projects/acme/auth/action?token=tok-two&type=verify');

    settings.set('acme', { mail_from: 'Acme <news@acme.test>', redirect_url: null });
    await queue.enqueue(testMailJob({ project: 'acme', to: 'three@example.com' }));
    await waitFor('the third mail', () => smtp.messages.length === 3);
    expect(byTo('three@example.com').from).toBe('news@acme.test');
    expect(byTo('three@example.com').text).toContain('https://default.test/v1/projects/acme/auth/action?token=');
  });

  it('retries, then dead-letters, a mail while auth cannot be reached', async () => {
    await auth.shutdown();
    const job = testMailJob();
    await queue.enqueue(job);
    const jobs = await waitFor('the dead letter', async () => {
      const res = await asGateway(mailer.service.app, 'acme').get('/v1/projects/acme/mail/failed').expect(200);
      return res.body.jobs.length ? res.body.jobs : undefined;
    });
    expect(jobs).toEqual([expect.objectContaining({ id: job.id, attempts: 2, error: expect.stringMatching(/Cannot reach/) })]);
    expect(smtp.messages).toEqual([]);
  });
});
