import { MongoClient } from 'mongodb';
import { createMingoDb } from '@plinth/shared/testing/mingo-db';
import { MongoProjectStore } from '../src/store/mongo-project-store';
import { describeProjectStoreContract } from './project-store.contract';

// DESIGN.md §3 (b): always — every filter the adapter sends is evaluated by mingo.
describeProjectStoreContract('mongo (query translation on mingo)', async () => new MongoProjectStore(createMingoDb()).init());

// DESIGN.md §3 (a): against a real server when MONGO_URL is set.
const mongoUrl = process.env.MONGO_URL;
if (mongoUrl) {
  describeProjectStoreContract(`mongo (real server at MONGO_URL)`, async () => {
    const client = await new MongoClient(mongoUrl).connect();
    const db = client.db(`plinth_test_${process.pid}_${Date.now()}`);
    return new MongoProjectStore(db, async () => {
      await db.dropDatabase();
      await client.close();
    }).init();
  });
}
