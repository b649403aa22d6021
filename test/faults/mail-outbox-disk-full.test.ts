import path from 'node:path';
import { Writable } from 'node:stream';
import nodemailer from 'nodemailer';
import pino from 'pino';
import { EmbeddedMailQueue, type MailJob } from '@plinth/shared';
import { testMailJob } from '@plinth/shared/testing/mail-job';
import { mountTinyDisk, type TinyDisk } from '@plinth/shared/testing/tiny-disk';
import { waitFor } from '@plinth/shared/testing/wait-for';
import { SmtpCapture } from '../../services/mailer/test/support/smtp-capture';

/**
 * Fault: the disk under the embedded outbox fills up (a real tmpfs filled to ENOSPC, so SQLite
 * answers SQLITE_FULL when a write commits). A claim or a state change that cannot be written
 * must stop delivery of that job and back off — never a mail storm.
 */
describe('embedded mail outbox on a full disk', () => {
  const smtp = new SmtpCapture();
  let disk: TinyDisk;
  let queue: EmbeddedMailQueue;
  let logLines: string[];

  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  beforeAll(() => smtp.start(0));
  afterAll(() => smtp.stop());

  beforeEach(() => {
    smtp.messages.length = 0;
    disk = mountTinyDisk();
    logLines = [];
  });

  afterEach(async () => {
    disk.free();
    await queue.close();
    disk.unmount();
  });

  function open(leaseMs: number): EmbeddedMailQueue {
    const stream = new Writable({
      write(chunk: Buffer, _enc, done) {
        logLines.push(chunk.toString());
        done();
      },
    });
    queue = new EmbeddedMailQueue({
      file: path.join(disk.dir, 'mailer.db'),
      attempts: 3,
      backoffMs: 20,
      pollMs: 20,
      leaseMs,
      logger: pino({ level: 'warn' }, stream),
    });
    return queue;
  }

  async function send(job: MailJob): Promise<void> {
    const transport = nodemailer.createTransport({ url: smtp.url } as Parameters<typeof nodemailer.createTransport>[0]);
    try {
      await transport.sendMail({ from: 'noreply@example.com', to: job.to, subject: `verify ${job.id}`, text: 'hello' });
    } finally {
      transport.close();
    }
  }

  it('a claim that cannot be written delivers nothing and backs off; the mail goes out once when space returns', async () => {
    const q = open(30_000);
    const job = testMailJob();
    await q.enqueue(job);
    disk.fill();
    let calls = 0;
    q.start(async (j) => {
      calls += 1;
      await send(j);
    });

    await sleep(1000);
    const failedClaims = logLines.filter((l) => l.includes('mail outbox write failed')).length;
    expect(calls).toBe(0);
    expect(smtp.messages).toHaveLength(0);
    expect(failedClaims).toBeGreaterThan(0);
    // Exponential back-off from 20 ms: about 6 tries in a second (the storm made thousands).
    expect(failedClaims).toBeLessThanOrEqual(10);

    disk.free();
    await waitFor('the delivery', async () => (await q.counts()).waiting === 0 && (await q.counts()).active === 0, {
      timeoutMs: 15_000,
    });
    expect(smtp.messages.map((m) => m.subject)).toEqual([`verify ${job.id}`]);
    expect(calls).toBe(1);
  });

  it('a mail sent whose "done" cannot be written is not sent again, and is recorded when space returns', async () => {
    const q = open(200);
    const job = testMailJob();
    await q.enqueue(job);
    let calls = 0;
    q.start(async (j) => {
      calls += 1;
      await send(j);
      disk.fill();
    });

    await waitFor('the first delivery', () => smtp.messages.length === 1);
    // Several lease periods pass while the state cannot be written.
    await sleep(1000);
    expect(calls).toBe(1);
    expect(smtp.messages).toHaveLength(1);
    expect(logLines.some((l) => l.includes('mail sent but its state could not be written'))).toBe(true);

    disk.free();
    await waitFor('the job recorded as done', async () => {
      const c = await q.counts();
      return c.waiting === 0 && c.active === 0;
    }, { timeoutMs: 15_000 });
    await sleep(300);
    expect(calls).toBe(1);
    expect(smtp.messages).toHaveLength(1);
  });
});
