import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createMingoDb } from '@plinth/shared/testing/mingo-db';
import { MongoRecordStore } from '../src/store/mongo/mongo-record-store';
import { SqliteRecordStore } from '../src/store/sqlite/sqlite-record-store';
import { describeSearchContract } from './search.contract';
import { describeTextOperatorContract } from './text-operators.contract';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});
function tempFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-text-search-'));
  dirs.push(dir);
  return path.join(dir, 'records.db');
}
async function mongoOnMingo(): Promise<MongoRecordStore> {
  const store = new MongoRecordStore(createMingoDb());
  await store.init();
  return store;
}

describeTextOperatorContract('sqlite (in memory)', async () => SqliteRecordStore.open(':memory:'));
describeTextOperatorContract('sqlite (file, a reader thread)', async () => SqliteRecordStore.open(tempFile(), { readers: 1 }));
describeTextOperatorContract('mongo adapter on mingo', mongoOnMingo);

describeSearchContract('sqlite (in memory)', async () => SqliteRecordStore.open(':memory:'));
describeSearchContract('sqlite (file, a reader thread)', async () => SqliteRecordStore.open(tempFile(), { readers: 1 }));
describeSearchContract('mongo adapter on mingo', mongoOnMingo);

// Opt-in: a real MongoDB server when MONGO_URL is set (docs/testing.md), a fresh database per store.
const MONGO_URL = process.env.MONGO_URL;
if (MONGO_URL) {
  const openReal = async (): Promise<MongoRecordStore> => {
    const { MongoClient } = await import('mongodb');
    const client = new MongoClient(MONGO_URL, { writeConcern: { w: 'majority' } });
    await client.connect();
    const db = client.db(`plinth_text_search_${Math.random().toString(36).slice(2, 10)}`);
    const store = new MongoRecordStore(db, async () => {
      await db.dropDatabase();
      await client.close();
    });
    await store.init();
    return store;
  };
  describeTextOperatorContract('mongo adapter on real MongoDB (MONGO_URL)', openReal);
  describeSearchContract('mongo adapter on real MongoDB (MONGO_URL)', openReal);
}
