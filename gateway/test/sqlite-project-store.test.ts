import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openSqlite } from '@plinth/shared';
import { SqliteProjectStore } from '../src/store/sqlite-project-store';
import { describeProjectStoreContract } from './project-store.contract';

// A file per test, so a second connection can install a failing trigger (failure injection).
const dir = mkdtempSync(path.join(tmpdir(), 'plinth-project-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
let file = '';

describeProjectStoreContract(
  'sqlite',
  async () => {
    file = path.join(dir, `gateway-${++n}.db`);
    return new SqliteProjectStore(file);
  },
  {
    async failKeyDeletion() {
      const db = openSqlite(file);
      db.exec(`CREATE TRIGGER fail_key_delete BEFORE DELETE ON api_keys BEGIN SELECT RAISE(ABORT, 'injected failure'); END;`);
      return async () => {
        db.exec('DROP TRIGGER fail_key_delete');
        db.close();
      };
    },
  },
);
