import { waitFor } from '@plinth/shared/testing/wait-for';
import { startCluster, type Cluster } from '@plinth/testing/cluster';
import { SmtpCapture } from '../../services/mailer/test/support/smtp-capture';
import { enableAuth, projectCall, type ProjectAccess } from './support/api';
import {
  capturedFor,
  forgotAndReset,
  otpSignIn,
  PASSWORD,
  signUpAndVerify,
  smtpReader,
  tokenFromLink,
  type MailReader,
} from './support/mail-flows';
import { REDIS_URL, redisRun } from './support/redis-run';

interface DeadLetter {
  id: string;
  kind: string;
  to: string;
  attempts: number;
  error: string;
}

const ATTEMPTS = 3;
const BACKOFF_MS = 100;

/**
 * Issue 6, cluster: auth, records, mailer and gateway as separate processes (their dist/main.js),
 * mail jobs on BullMQ in the real Redis, mails delivered to a real SMTP server run by the test.
 */
describe('mail flows end to end: separate processes, BullMQ on Redis, real SMTP', () => {
  const run = redisRun('mail');
  const smtp = new SmtpCapture();
  let cluster: Cluster;
  let p: ProjectAccess;
  let read: MailReader;

  beforeAll(async () => {
    await smtp.start(0);
    cluster = await startCluster({
      env: {
        REDIS_URL,
        SMTP_URL: smtp.url,
        PLINTH_MAIL_QUEUE: run.queueName,
        PLINTH_MAIL_ATTEMPTS: String(ATTEMPTS),
        PLINTH_MAIL_BACKOFF_MS: String(BACKOFF_MS),
      },
    });
    p = { url: cluster.url, ...(await cluster.createProject(run.projectId('e2e-mail'))) };
    await enableAuth(p, {
      send_verification_on_signup: true,
      otp_creates_users: true,
      redirect_url: 'https://app.example.com/welcome',
      mail_from: 'hello@acme.example',
    });
    read = smtpReader(smtp);
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
    await smtp.stop();
    await run.cleanUp();
  });

  it('sign-up: the verification mail arrives over SMTP and its link token verifies the e-mail', async () => {
    await signUpAndVerify(p, read, 'ada@example.com');
    const [mail] = capturedFor(smtp, 'ada@example.com', 'verify');
    // The project's settings reached the mailer process (it asks auth over AUTH_URL).
    expect(mail!.from).toBe('hello@acme.example');
    expect(mail!.text).toContain('https://app.example.com/welcome?token=');
    expect(mail!.headers.get('x-plinth-project')).toBe(p.id);
  });

  it('forgot password: the reset mail arrives; the new password signs in and the old one does not', async () => {
    await signUpAndVerify(p, read, 'grace@example.com');
    await forgotAndReset(p, read, 'grace@example.com');
  });

  it('one-time code: the code arrives over SMTP and redeems to a session', async () => {
    await otpSignIn(p, read, 'linus@example.com');
  });

  it('the SMTP server refuses the first attempts, then accepts: the mail arrives exactly once', async () => {
    const email = 'barbara@example.com';
    const signup = await projectCall(p, 'POST', '/auth/users', { key: p.secretKey, body: { email, password: PASSWORD } });
    expect(signup.status).toBe(201);
    smtp.refusals.push('rcpt', 'data'); // two temporary failures; the third attempt is accepted
    const forgot = await projectCall(p, 'POST', '/auth/password/forgot', { key: p.publicKey, body: { email } });
    expect(forgot.status).toBe(200);

    await waitFor('the reset mail', () => capturedFor(smtp, email, 'reset').length > 0);
    expect(smtp.refusals).toEqual([]);
    // Longer than every backoff left (100 + 200 ms): a duplicate would have arrived by now.
    await new Promise((r) => setTimeout(r, 4 * BACKOFF_MS * ATTEMPTS));
    expect(capturedFor(smtp, email)).toHaveLength(1);
    const failed = await projectCall<{ jobs: DeadLetter[] }>(p, 'GET', '/mail/failed', { key: p.secretKey });
    expect(failed).toEqual({ status: 200, body: { jobs: [] } });
  });

  it('the SMTP server stays down: the job is dead-lettered; a retry after it is back delivers it once', async () => {
    const email = 'edsger@example.com';
    expect((await projectCall(p, 'POST', '/auth/users', { key: p.secretKey, body: { email, password: PASSWORD } })).status).toBe(201);
    await smtp.stop();
    try {
      const forgot = await projectCall(p, 'POST', '/auth/password/forgot', { key: p.publicKey, body: { email } });
      expect(forgot.status).toBe(200);

      const dead = await waitFor('the dead letter', async () => {
        const res = await projectCall<{ jobs: DeadLetter[] }>(p, 'GET', '/mail/failed', { key: p.secretKey });
        expect(res.status).toBe(200);
        return res.body.jobs.find((j) => j.to === email);
      });
      expect(dead).toMatchObject({ kind: 'reset', to: email, attempts: ATTEMPTS, error: expect.stringMatching(/ECONNREFUSED/) });
      expect(JSON.stringify(dead)).not.toMatch(/token/i);
      // A public key may not read or retry dead letters.
      expect((await projectCall(p, 'GET', '/mail/failed', { key: p.publicKey })).status).toBe(403);
      expect((await projectCall(p, 'POST', `/mail/failed/${dead.id}/retry`, { key: p.publicKey })).status).toBe(403);
    } finally {
      await smtp.start();
    }

    const failed = await projectCall<{ jobs: DeadLetter[] }>(p, 'GET', '/mail/failed', { key: p.secretKey });
    const id = failed.body.jobs.find((j) => j.to === email)!.id;
    const retry = await projectCall(p, 'POST', `/mail/failed/${id}/retry`, { key: p.secretKey });
    expect(retry).toEqual({ status: 200, body: { retried: true, id } });

    await waitFor('the retried mail', () => capturedFor(smtp, email, 'reset').length > 0);
    await new Promise((r) => setTimeout(r, 4 * BACKOFF_MS * ATTEMPTS));
    const received = capturedFor(smtp, email);
    expect(received).toHaveLength(1);
    expect(received[0]!.messageId).toBe(`<${id}@acme.example>`);
    expect((await projectCall(p, 'GET', '/mail/failed', { key: p.secretKey })).body).toEqual({ jobs: [] });
    expect((await projectCall(p, 'POST', `/mail/failed/${id}/retry`, { key: p.secretKey })).status).toBe(404);

    // The delivered token still works: the user sets a new password with it.
    const token = tokenFromLink(received[0]!.text);
    const reset = await projectCall(p, 'POST', '/auth/password/reset', { key: p.publicKey, body: { token, password: 'back online now' } });
    expect(reset).toEqual({ status: 200, body: { reset: true } });
  });
});
