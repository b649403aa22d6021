import { MongoClient } from 'mongodb';
import { newId } from '@plinth/shared';
import { createMingoDb } from '@plinth/shared/testing/mingo-db';
import { MongoUserStore } from '../src/store/mongo-user-store';
import { describeUserStoreContract } from './user-store-contract';

describeUserStoreContract('mongo on the mingo fake (query translation)', async () => {
  const store = await MongoUserStore.open(createMingoDb());
  return { store, cleanup: async () => {} };
});

const MONGO_URL = process.env.MONGO_URL;
if (MONGO_URL) {
  describeUserStoreContract('mongo on a real server (MONGO_URL)', async () => {
    const client = await MongoClient.connect(MONGO_URL);
    const db = client.db(`plinth_test_${newId('')}`);
    const store = await MongoUserStore.open(db);
    return {
      store,
      cleanup: async () => {
        await db.dropDatabase();
        await client.close();
      },
    };
  });
}
