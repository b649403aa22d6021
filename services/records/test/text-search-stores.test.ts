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
