import { fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EmbeddedMailQueue, type MailAttempt, type MailJob } from '@plinth/shared';
import { waitFor } from '@plinth/shared/testing/wait-for';
import { mailJob } from './mail-queue-contract';

describe('embedded outbox: a process that dies mid-delivery', () => {
  let dir: string;
  let file: string;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-outbox-crash-'));
    file = path.join(dir, 'mailer.db');
  });

  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('leaves its claimed job to the next consumer once the lease lapses, delivered once, as attempt 1', async () => {
    const producer = new EmbeddedMailQueue({ file, attempts: 3, backoffMs: 5 });
    const job = mailJob();
    await producer.enqueue(job);
    await producer.close();

    const child = fork(path.join(__dirname, 'support', 'outbox-crash-child.js'), [file, '300'], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    const claimed = await new Promise<string>((resolve, reject) => {
      child.once('message', (msg: { claimed: string }) => resolve(msg.claimed));
      child.once('exit', (code) => reject(new Error(`child exited early with ${code}`)));
    });
    expect(claimed).toBe(job.id);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;

    const consumer = new EmbeddedMailQueue({ file, attempts: 3, backoffMs: 5, pollMs: 10, leaseMs: 300 });
    try {
      expect(await consumer.counts()).toEqual({ waiting: 0, active: 1, failed: 0 });
      const calls: [MailJob, MailAttempt][] = [];
      consumer.start(async (j, attempt) => {
        calls.push([j, attempt]);
      });
      await waitFor('the redelivery', async () => (await consumer.counts()).active === 0 && calls.length > 0);
      expect(calls).toEqual([[job, { attempt: 1, attempts: 3 }]]);
      expect(await consumer.counts()).toEqual({ waiting: 0, active: 0, failed: 0 });
    } finally {
      await consumer.close();
    }
  });
});
