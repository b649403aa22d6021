import { Redis } from 'ioredis';
import { waitFor } from '@plinth/shared/testing/wait-for';
import { startCluster, type Cluster } from '@plinth/testing/cluster';
import { SmtpCapture } from '../../services/mailer/test/support/smtp-capture';
import { enableAuth, projectCall, type ProjectAccess, type SessionBody } from '../e2e/support/api';
import { capturedFor, PASSWORD, tokenFromLink } from '../e2e/support/mail-flows';
import { OwnRedis } from './support/own-redis';

/**
 * Fault: Redis fails in the middle of a sign-up — after the user row is written (SQLite), while
 * the verification mail is enqueued (BullMQ) or the session is made (Redis). The failure is
 * injected exactly there with a Redis ACL on the test's own Redis that refuses the keys of that
 * step only. The client sees an error, and a retry with the same e-mail and password completes
 * the account (201, a working session) instead of 409 "taken"; the verification mail goes out
 * once and its link works.
 */
describe('sign-up when Redis fails midway', () => {
  const smtp = new SmtpCapture();
  let redis: OwnRedis;
  let admin: Redis;
  let cluster: Cluster;
  let p: ProjectAccess;

  /** The services' PLINTH_NONCE_PREFIX: the ACL below lets them touch only these keys besides. */
  const NONCES = 'faults-signup:nonce:';
  /**
   * Lets the services touch only keys matching `patterns` (until `allowAll`); internal-credential
   * nonces stay allowed, so requests still reach the sign-up flow.
   */
  const allowOnly = (...patterns: string[]) =>
    admin.call('ACL', 'SETUSER', 'default', 'resetkeys', ...[`${NONCES}*`, ...patterns].map((k) => `~${k}`));
  /** The user row exists (the failure came after it was written). */
  const expectUserRow = async (email: string) => {
    const list = await projectCall<{ total: number }>(p, 'GET', `/auth/users?search=${encodeURIComponent(email)}`, { key: p.secretKey });
    expect(list).toMatchObject({ status: 200, body: { total: 1 } });
  };
  const allowAll = () => admin.call('ACL', 'SETUSER', 'default', 'allkeys');

  const signUp = (email: string) =>
    projectCall<SessionBody & { error?: string }>(p, 'POST', '/auth/signup', { key: p.publicKey, body: { email, password: PASSWORD } });

  beforeAll(async () => {
    await smtp.start(0);
    redis = await OwnRedis.start();
    // The test's own admin connection authenticates before the ACL narrows what `default` may touch.
    admin = new Redis(redis.url);
    await admin.call('ACL', 'SETUSER', 'faults-admin', 'on', 'nopass', '~*', '&*', '+@all');
    await admin.call('AUTH', 'faults-admin', 'any');
    cluster = await startCluster({ env: { REDIS_URL: redis.url, SMTP_URL: smtp.url, PLINTH_NONCE_PREFIX: NONCES } });
    p = { url: cluster.url, ...(await cluster.createProject('faults-signup')) };
    await enableAuth(p, { send_verification_on_signup: true });
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
    admin?.disconnect();
    await redis?.kill();
    await smtp.stop();
  });

  async function expectCompletedOnRetry(email: string): Promise<void> {
    const retry = await signUp(email);
    expect(retry.status).toBe(201);
    expect(retry.body.user.email).toBe(email);
    const me = await projectCall(p, 'GET', '/auth/user', { key: p.publicKey, userToken: retry.body.access_token });
    expect(me.status).toBe(200);

    // Exactly one verification mail, and its link verifies the account.
    const mail = await waitFor('the verification mail', () => capturedFor(smtp, email, 'verify')[0]);
    await new Promise((r) => setTimeout(r, 1000));
    expect(capturedFor(smtp, email, 'verify')).toHaveLength(1);
    const confirm = await projectCall(p, 'POST', '/auth/verify/confirm', { key: p.publicKey, body: { token: tokenFromLink(mail.text) } });
    expect(confirm.status).toBe(200);

    // The account is finished now: another sign-up is "taken", as for any account.
    expect((await signUp(email)).status).toBe(409);
  }

  it('the session cannot be made: an error, then a retry with the same credentials completes it, one mail', async () => {
    const email = 'session-fails@example.com';
    await allowOnly('plinth:auth:rl:*', 'bull:*');
    let first;
    try {
      first = await signUp(email);
    } finally {
      await allowAll();
    }
    expect(first.status).toBeGreaterThanOrEqual(500);
    expect(['unavailable', 'internal']).toContain(first.body.error);
    await expectUserRow(email);
    await expectCompletedOnRetry(email);
  });

  it('the mail cannot be enqueued: an error, then the retry completes it and mails once', async () => {
    const email = 'mail-fails@example.com';
    await allowOnly('plinth:auth:*');
    let first;
    try {
      first = await signUp(email);
    } finally {
      await allowAll();
    }
    expect(first.status).toBeGreaterThanOrEqual(500);
    expect(capturedFor(smtp, email)).toHaveLength(0);
    await expectUserRow(email);
    await expectCompletedOnRetry(email);
  });

  it('a retry with another password is still refused as taken', async () => {
    const email = 'half-made@example.com';
    await allowOnly('plinth:auth:rl:*', 'bull:*');
    try {
      expect((await signUp(email)).status).toBeGreaterThanOrEqual(500);
    } finally {
      await allowAll();
    }
    await expectUserRow(email);
    const other = await projectCall(p, 'POST', '/auth/signup', { key: p.publicKey, body: { email, password: 'another password 2' } });
    expect(other.status).toBe(409);
  });
});
