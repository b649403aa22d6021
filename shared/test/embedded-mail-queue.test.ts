import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EmbeddedMailQueue, openSqlite } from '@plinth/shared';
import { describeMailQueueContract, mailJob } from './mail-queue-contract';

describeMailQueueContract('embedded (SQLite outbox)', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-outbox-'));
  const file = path.join(dir, 'mailer.db');
  return {
    open: (opts) => new EmbeddedMailQueue({ ...opts, file, pollMs: 10 }),
    cleanup: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
});

describe('embedded outbox: delivered mail past the retention', () => {
  it('is deleted through an index (2,500 rows: more than one step), keeping newer delivered mail and the jobs still to send', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-outbox-'));
    const file = path.join(dir, 'mailer.db');
    const queue = new EmbeddedMailQueue({ file, pollMs: 10, retentionMs: 60_000, attempts: 3, backoffMs: 10 });
    const db = openSqlite(file);
    try {
      const now = Date.now();
      const put = db.prepare(
        `INSERT INTO mail_outbox (id, project, job, state, max_attempts, backoff_ms, run_at, enqueued_at, finished_at)
         VALUES (?, 'p', '{}', 'done', 5, 1000, ?, ?, ?)`,
      );
      db.transaction(() => {
        for (let i = 0; i < 2500; i++) put.run(`old-${i}`, now - 300_000, now - 300_000, now - 120_000);
        for (let i = 0; i < 10; i++) put.run(`recent-${i}`, now - 30_000, now - 30_000, now - 10_000);
      })();
      const plan = db.prepare(`EXPLAIN QUERY PLAN SELECT id FROM mail_outbox WHERE state = 'done' AND finished_at < ? LIMIT ?`).all(now, 1000) as Array<{ detail: string }>;
      expect(plan.map((r) => r.detail).join('\n')).toMatch(/INDEX mail_outbox_finished/);

      const job = mailJob();
      await queue.enqueue(job);
      const delivered: string[] = [];
      queue.start(async (j) => {
        delivered.push(j.id);
      });
      const count = (sql: string) => db.prepare(sql).pluck().get() as number;
      for (let i = 0; i < 200 && (count(`SELECT count(*) FROM mail_outbox WHERE id LIKE 'old-%'`) > 0 || delivered.length === 0); i++) {
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(count(`SELECT count(*) FROM mail_outbox WHERE id LIKE 'old-%'`)).toBe(0);
      expect(count(`SELECT count(*) FROM mail_outbox WHERE id LIKE 'recent-%'`)).toBe(10);
      expect(delivered).toEqual([job.id]);
    } finally {
      await queue.close();
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
