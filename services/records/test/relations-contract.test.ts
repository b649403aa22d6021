/** The relation contracts on every RecordStore adapter: SQLite, and MongoDB on the mingo stand-in. */
import { createMingoDb } from '@plinth/shared/testing/mingo-db';
import { MongoRecordStore } from '../src/store/mongo/mongo-record-store';
import { SqliteRecordStore } from '../src/store/sqlite/sqlite-record-store';
import { describeRelationsContract } from './relations.contract';
import { describeRelationsExpandContract } from './relations-expand.contract';

async function mongoOnMingo(): Promise<MongoRecordStore> {
  const store = new MongoRecordStore(createMingoDb());
  await store.init();
  return store;
}

describeRelationsContract('sqlite (in memory)', async () => SqliteRecordStore.open(':memory:'));
describeRelationsContract('mongo adapter on mingo', mongoOnMingo);
describeRelationsExpandContract('sqlite (in memory)', async () => SqliteRecordStore.open(':memory:'));
describeRelationsExpandContract('mongo adapter on mingo', mongoOnMingo);
