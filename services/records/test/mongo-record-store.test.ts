import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { createMingoDb } from '@plinth/shared/testing/mingo-db';
import { MongoRecordStore } from '../src/store/mongo/mongo-record-store';
import { describeRecordStoreContract } from './record-store.contract';

// Always: the query translation evaluated by mingo over the same documents (DESIGN.md §3).
describeRecordStoreContract('mongo adapter on mingo', async () => {
  const store = new MongoRecordStore(createMingoDb());
  await store.init();
  return store;
});

// Opt-in: a real MongoDB server when MONGO_URL is set (a fresh database per test, dropped after).
const MONGO_URL = process.env.MONGO_URL;
if (MONGO_URL) describeRecordStoreContract('mongo adapter on real MongoDB (MONGO_URL)', async () => {
  const client = new MongoClient(MONGO_URL, { writeConcern: { w: 'majority' } });
  await client.connect();
  const db = client.db(`plinth_records_test_${randomUUID().slice(0, 8)}`);
  const store = new MongoRecordStore(db);
  await store.init();
  const close = store.close.bind(store);
  store.close = async () => {
    await close();
    await db.dropDatabase();
    await client.close();
  };
  return store;
});
