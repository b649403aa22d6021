/**
 * The webhook store contract on each adapter: SQLite (webhooks.db), the MongoDB adapter on the
 * mingo stand-in, and on a real MongoDB server when MONGO_URL is set (docs/testing.md).
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { openSqlite } from '@plinth/shared';
import { createMingoDb } from '@plinth/shared/testing/mingo-db';
import { MongoWebhookStore } from '../../src/webhooks/mongo-webhook-store';
import { SqliteWebhookStore } from '../../src/webhooks/sqlite-webhook-store';
import { describeWebhookStoreContract } from '../webhook-store.contract';

describeWebhookStoreContract('sqlite', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-hooks-'));
  const db = openSqlite(path.join(dir, 'webhooks.db'));
  return {
    store: new SqliteWebhookStore(db),
    close: async () => {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
});

describeWebhookStoreContract('mongo adapter on mingo', async () => {
  const store = new MongoWebhookStore(createMingoDb());
  await store.init();
  return { store, close: async () => {} };
});

const MONGO_URL = process.env.MONGO_URL;
if (!MONGO_URL) {
  process.stdout.write('webhook-stores: MONGO_URL is not set, so the real-server contract is not registered (docs/testing.md)\n');
} else {
  describeWebhookStoreContract('mongo adapter on real MongoDB (MONGO_URL)', async () => {
    const client = new MongoClient(MONGO_URL, { writeConcern: { w: 'majority' } });
    await client.connect();
    const db = client.db(`plinth_webhooks_test_${randomUUID().slice(0, 8)}`);
    const store = new MongoWebhookStore(db);
    await store.init();
    return {
      store,
      close: async () => {
        await db.dropDatabase();
        await client.close();
      },
    };
  });
}
