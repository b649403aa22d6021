import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EmbeddedMailQueue } from '@plinth/shared';
import { describeMailQueueContract } from './mail-queue-contract';

describeMailQueueContract('embedded (SQLite outbox)', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-outbox-'));
  const file = path.join(dir, 'mailer.db');
  return {
    open: (opts) => new EmbeddedMailQueue({ ...opts, file, pollMs: 10 }),
    cleanup: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
});
