import type { SqliteDatabase } from '@plinth/shared';
import { SqliteProjectStore } from '../src/store/sqlite-project-store';
import type { ProjectStore } from '../src/store/project-store';
import { describeOperatorStoreContract } from './operator-store.contract';
import { describeProjectStoreContract } from './project-store.contract';

const SECRET = 'internal-secret-for-tests-0123456789abcdef';

/** The store's own connection (test-only reach-in), to install a trigger that makes a delete fail. */
const connectionOf = (store: ProjectStore): SqliteDatabase => (store as unknown as { db: SqliteDatabase }).db;

describeProjectStoreContract('sqlite', async () => new SqliteProjectStore(':memory:', { internalSecret: SECRET }), {
  async failKeyDeletion(store) {
    const db = connectionOf(store);
    db.exec(`CREATE TRIGGER fail_key_delete BEFORE DELETE ON api_keys BEGIN SELECT RAISE(ABORT, 'injected failure'); END;`);
    return async () => {
      db.exec('DROP TRIGGER fail_key_delete');
    };
  },
});

describeOperatorStoreContract('sqlite', async () => new SqliteProjectStore(':memory:', { internalSecret: SECRET }));
