/** Atomic batch writes on the MongoDB adapter (one multi-document transaction), on the in-repo stand-in. */
import { createMingoDb } from '@plinth/shared/testing/mingo-db';
import { MongoRecordStore } from '../../src/store/mongo/mongo-record-store';
import { describeBatchContract } from './batch.contract';

describeBatchContract('MongoDB adapter on mingo', async () => {
  const store = new MongoRecordStore(createMingoDb());
  await store.init();
  return { store, close: () => store.close() };
});
