/** Atomic batch writes on the standalone store (SQLite, one transaction). */
import { SqliteRecordStore } from '../../src/store/sqlite/sqlite-record-store';
import { describeBatchContract } from './batch.contract';

describeBatchContract('SQLite', async () => {
  const store = SqliteRecordStore.open(':memory:');
  return { store, close: () => store.close() };
});
