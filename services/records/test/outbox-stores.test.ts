import { SqliteOutboxSource } from '@plinth/shared';
import { openSqlite } from '@plinth/shared';
import { createMingoDb } from '@plinth/shared/testing/mingo-db';
import { MongoOutboxSource } from '../src/store/mongo/mongo-outbox';
import { MongoRecordStore } from '../src/store/mongo/mongo-record-store';
import { SqliteRecordStore } from '../src/store/sqlite/sqlite-record-store';
import { describeOutboxContract } from './outbox.contract';

describeOutboxContract('sqlite', async () => {
  const db = openSqlite(':memory:');
  return { store: new SqliteRecordStore(db, null, undefined, true), source: new SqliteOutboxSource(db) };
});

// The MongoDB adapter on the mingo stand-in (docs/architecture.md "Ports and adapters").
describeOutboxContract('mongo adapter on mingo', async () => {
  const db = createMingoDb();
  const store = new MongoRecordStore(db, undefined, { outbox: true });
  await store.init();
  return { store, source: new MongoOutboxSource(db) };
});
