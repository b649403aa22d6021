import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteMailboxStore } from '../src/store/sqlite-mailbox-store';
import { describeMailboxStoreContract } from './mailbox-store-contract';

describeMailboxStoreContract('sqlite', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-mailbox-'));
  return {
    open: () => new SqliteMailboxStore(path.join(dir, 'mailer.db')),
    cleanup: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
});
