import path from 'node:path';
import Database from 'better-sqlite3';
import { waitFor } from '@plinth/shared/testing/wait-for';
import { startCluster, type Cluster } from '@plinth/testing/cluster';
import { SmtpCapture } from '../../services/mailer/test/support/smtp-capture';
import { enableAuth, projectCall, type ProjectAccess } from '../e2e/support/api';
import { capturedFor } from '../e2e/support/mail-flows';
import { OwnRedis } from './support/own-redis';

/**
 * Fault: the mail queue's Redis restarts empty (or fails over to a replica that lagged) while
 * mails wait in it, in the cluster topology (two auth replicas, BullMQ, a real SMTP server).
 * Auth keeps each mail in the users' database until the queue delivered it and enqueues again
 * what the queue lost (docs/operators.md "What Redis holds"): every mail arrives, exactly once,
 * and mails delivered before the loss are not sent again.
 */
describe('mail jobs when Redis comes back empty', () => {
  const PASSWORD = 'correct horse 1';
  const smtp = new SmtpCapture();
  let redis: OwnRedis;
  let cluster: Cluster;
  let p: ProjectAccess;

  const signUp = (email: string) => projectCall(p, 'POST', '/auth/signup', { key: p.publicKey, body: { email, password: PASSWORD } });
  /** Mails auth still keeps (not yet seen delivered by the queue), read from its database file. */
  const stored = (): number => {
    const db = new Database(path.join(cluster.dataDir, 'auth.db'), { readonly: true, fileMustExist: true });
    try {
      return (db.prepare('SELECT count(*) AS n FROM auth_mail_outbox').get() as { n: number }).n;
    } finally {
      db.close();
    }
  };
  const stopMailer = async () => {
    const mailer = cluster.processes.find((x) => x.name === 'mailer-0')!;
    const exited = new Promise((r) => mailer.child.once('exit', r));
    mailer.child.kill('SIGKILL');
    await exited;
  };

  beforeAll(async () => {
    await smtp.start(0);
    redis = await OwnRedis.start();
    cluster = await startCluster({
      replicas: { auth: 2, records: 1 },
      env: { REDIS_URL: redis.url, SMTP_URL: smtp.url, PLINTH_MAIL_RECHECK_MS: '200', PLINTH_MAIL_BACKOFF_MS: '50' },
    });
    p = { url: cluster.url, ...(await cluster.createProject('faults-mail')) };
    await enableAuth(p, { send_verification_on_signup: true });
  }, 90_000);

  afterAll(async () => {
    await cluster?.stop();
    await redis?.kill();
    await smtp.stop();
  });

  it('mails waiting in the queue when Redis loses its data are still sent, each exactly once', async () => {
    // Delivered before the loss: the queue reports it delivered, and auth forgets it.
    expect((await signUp('before@example.com')).status).toBe(201);
    await waitFor('the first mail', () => (capturedFor(smtp, 'before@example.com', 'verify').length > 0 ? true : undefined));
    await waitFor('auth forgetting the delivered mail', () => (stored() === 0 ? true : undefined));

    // Three mails wait in the queue (no mailer takes them), then Redis restarts without its data.
    await stopMailer();
    const waiting = ['a@example.com', 'b@example.com', 'c@example.com'];
    for (const email of waiting) expect((await signUp(email)).status).toBe(201);
    expect(stored()).toBe(3);
    await redis.restartEmpty();
    await cluster.restart('mailer-0');

    for (const email of waiting) {
      await waitFor(`the verification mail to ${email}`, () => (capturedFor(smtp, email, 'verify').length > 0 ? true : undefined), { timeoutMs: 30_000 });
    }
    await waitFor('auth forgetting the delivered mails', () => (stored() === 0 ? true : undefined), { timeoutMs: 30_000 });
    // Several more checks by both auth replicas: nothing is sent twice, the early mail included.
    await new Promise((r) => setTimeout(r, 1000));
    for (const email of ['before@example.com', ...waiting]) expect([email, capturedFor(smtp, email, 'verify').length]).toEqual([email, 1]);
  }, 120_000);
});
