import { openSqlite } from '@plinth/shared';
import { SqliteUserStore } from '../src/store/sqlite-user-store';
import { describeUserStoreContract } from './user-store-contract';

describeUserStoreContract('sqlite', async () => {
  const db = openSqlite(':memory:');
  return {
    store: new SqliteUserStore(db),
    cleanup: async () => {
      db.close();
    },
  };
});
