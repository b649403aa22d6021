import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { waitFor } from '@plinth/shared/testing/wait-for';
import { startStandalone, stopStandalone, type StandaloneProcess } from '@plinth/testing/standalone-process';
import { SmtpCapture } from '../../services/mailer/test/support/smtp-capture';
import { enableAuth, projectCall, type ProjectAccess, type UserBody } from './support/api';
import {
  capturedFor,
  forgotAndReset,
  mailboxReader,
  otpSignIn,
  PASSWORD,
  signUpAndVerify,
  tokenFromLink,
} from './support/mail-flows';
import { selfServiceFlows } from './support/self-service-flows';

/** The demo project of a running standalone process. */
function demo(s: StandaloneProcess): ProjectAccess {
  return { url: s.url, id: 'demo', publicKey: s.publicKey, secretKey: s.secretKey };
}

interface OutboxRow {
  id: string;
  state: string;
  attempts_made: number;
  /** When the job is next due, ms since the epoch. */
  run_at: number;
}

/** The embedded outbox as the process keeps it (a read-only look at `mailer.db`). */
function outbox(dataDir: string): OutboxRow[] {
  const db = new Database(path.join(dataDir, 'mailer.db'), { readonly: true });
  try {
    return db.prepare('SELECT id, state, attempts_made, run_at FROM mail_outbox ORDER BY id').all() as OutboxRow[];
  } finally {
    db.close();
  }
}

const BASE_ENV = { PLINTH_BCRYPT_COST: '4', PLINTH_RATE_LIMIT_IP: '100000', PLINTH_RATE_LIMIT_EMAIL: '100000' };

/** Issue 6, standalone: the real `gateway/dist/standalone.js` process, embedded outbox, dev mailbox. */
describe('mail flows end to end: the standalone process and its dev mailbox', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-e2e-standalone-'));
  let s: StandaloneProcess;
  let p: ProjectAccess;

  beforeAll(async () => {
    s = await startStandalone(dataDir, { ...BASE_ENV, PLINTH_MAIL_POLL_MS: '20' });
    p = demo(s);
    await enableAuth(p, { send_verification_on_signup: true, otp_creates_users: true, redirect_url: 'https://demo.example.com/auth' });
  }, 60_000);

  afterAll(async () => {
    if (s) await stopStandalone(s);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('sign-up: the verification mail lands in the mailbox and its link token verifies the e-mail', async () => {
    const read = mailboxReader(p);
    await signUpAndVerify(p, read, 'ada@example.com');
  });

  it('forgot password: the reset mail lands in the mailbox; the new password signs in, the old one does not', async () => {
    const read = mailboxReader(p);
    await signUpAndVerify(p, read, 'grace@example.com');
    await forgotAndReset(p, read, 'grace@example.com');
  });

  it('one-time code: the code lands in the mailbox and redeems to a session', async () => {
    await otpSignIn(p, mailboxReader(p), 'linus@example.com');
  });

  it('self-service through the gateway: profile, change password, change e-mail (mailbox links), delete with a code', async () => {
    await selfServiceFlows(p, mailboxReader(p), 'sam@example.com');
  });
});

/**
 * Queued mail survives restarts of the standalone process. The first two runs deliver over SMTP
 * to a server that is down, so every job fails its first attempt and waits in the outbox for its
 * retry (1 s, then 2 s, …) when the process stops; the third run finds the server up.
 */
describe('restarting the standalone process with mail still queued', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-e2e-restart-'));
  const smtp = new SmtpCapture();
  let s: StandaloneProcess | undefined;

  afterAll(async () => {
    if (s) await stopStandalone(s, 'SIGKILL');
    await smtp.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('loses no job across a SIGTERM and a SIGKILL, and delivers each exactly once', async () => {
    await smtp.start(0);
    await smtp.stop(); // the port is known and refuses connections
    const env = { ...BASE_ENV, SMTP_URL: smtp.url, PLINTH_MAIL_BACKOFF_MS: '1000', PLINTH_MAIL_ATTEMPTS: '8', PLINTH_MAIL_POLL_MS: '20' };

    // Run 1: three mails queued, then a graceful stop.
    s = await startStandalone(dataDir, env);
    let p = demo(s);
    await enableAuth(p, { send_verification_on_signup: true, otp_creates_users: true });
    const signup = await projectCall<{ user: UserBody }>(p, 'POST', '/auth/signup', {
      key: p.publicKey,
      body: { email: 'ada@example.com', password: PASSWORD },
    });
    expect(signup.status).toBe(201);
    expect((await projectCall(p, 'POST', '/auth/password/forgot', { key: p.publicKey, body: { email: 'ada@example.com' } })).status).toBe(200);
    expect((await projectCall(p, 'POST', '/auth/otp/request', { key: p.publicKey, body: { email: 'otp@example.com' } })).status).toBe(200);
    expect(await stopStandalone(s, 'SIGTERM')).toBe(0);

    // Run 2: one more mail, then the process is killed outright. It is killed between attempts,
    // with every job waiting for a retry not due for a while: a job killed mid-attempt would stay
    // leased (30 s) before the next run takes it again.
    s = await startStandalone(dataDir, env);
    p = demo(s);
    // (Not a second reset for ada: one reset mail per user per minute.)
    expect((await projectCall(p, 'POST', '/auth/otp/request', { key: p.publicKey, body: { email: 'otp2@example.com' } })).status).toBe(200);
    await waitFor('every job to wait for a retry', () => {
      const rows = outbox(dataDir);
      const soon = Date.now() + 300;
      return rows.length === 4 && rows.every((r) => r.state === 'waiting' && r.attempts_made >= 1 && r.run_at > soon);
    });
    await stopStandalone(s, 'SIGKILL');
    expect(smtp.messages).toEqual([]);

    // Run 3: the SMTP server is back; every queued mail arrives, once.
    await smtp.start();
    s = await startStandalone(dataDir, env);
    p = demo(s);
    await waitFor('the four queued mails', () => smtp.messages.length >= 4, { timeoutMs: 20_000 });
    // A redelivery would come within one more poll; wait well past it before counting.
    await new Promise((r) => setTimeout(r, 1500));
    expect(smtp.messages).toHaveLength(4);
    expect(new Set(smtp.messages.map((m) => m.messageId)).size).toBe(4);
    expect(capturedFor(smtp, 'ada@example.com', 'verify')).toHaveLength(1);
    expect(capturedFor(smtp, 'ada@example.com', 'reset')).toHaveLength(1);
    expect(capturedFor(smtp, 'otp@example.com', 'otp')).toHaveLength(1);
    expect(capturedFor(smtp, 'otp2@example.com', 'otp')).toHaveLength(1);
    expect((await projectCall(p, 'GET', '/mail/failed', { key: p.secretKey })).body).toEqual({ jobs: [] });
    expect(outbox(dataDir).map((r) => r.state)).toEqual(['done', 'done', 'done', 'done']);

    // The tokens written before the restarts still work.
    const token = tokenFromLink(capturedFor(smtp, 'ada@example.com', 'verify')[0]!.text);
    const confirm = await projectCall<{ user: UserBody }>(p, 'POST', '/auth/verify/confirm', { key: p.publicKey, body: { token } });
    expect(confirm).toMatchObject({ status: 200, body: { verified: true, user: { id: signup.body.user.id, email_verified: true } } });
  }, 60_000);
});
