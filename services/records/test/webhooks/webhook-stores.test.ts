/**
 * The webhook store contract on each adapter: SQLite (webhooks.db), the MongoDB adapter on the
 * mingo stand-in, and on a real MongoDB server when MONGO_URL is set (docs/testing.md). Each
 * adapter stamps its data version (the `webhooks` component) once, and refuses data of a newer
 * release before it changes anything.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import Database from 'better-sqlite3';
import { asProjectId, openSqlite } from '@plinth/shared';
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

describe('data version', () => {
  it('SQLite: a new webhooks.db is stamped with the webhooks data version; a newer one is refused, untouched', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-hooks-version-'));
    try {
      const file = path.join(dir, 'webhooks.db');
      const db = openSqlite(file);
      new SqliteWebhookStore(db);
      new SqliteWebhookStore(db);
      expect(db.prepare('SELECT component, version FROM plinth_data_version').all()).toEqual([{ component: 'webhooks', version: 2 }]);
      db.close();
      const newer = new Database(file);
      newer.prepare("UPDATE plinth_data_version SET version = 3, release = '0.9.0' WHERE component = 'webhooks'").run();
      newer.exec('DROP TABLE webhook_leases');
      newer.close();
      const again = openSqlite(file);
      expect(() => new SqliteWebhookStore(again)).toThrow(`${file} holds webhooks data version 3 (written by Plinth 0.9.0), newer than this Plinth 0.1.0 knows (2)`);
      // Not even the baseline ran: the table the newer release dropped stays dropped.
      expect(again.prepare("SELECT name FROM sqlite_master WHERE name = 'webhook_leases'").get()).toBeUndefined();
      again.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('SQLite: webhooks of data version 1 gain enabled_at, their created_at', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-hooks-version-'));
    try {
      const file = path.join(dir, 'webhooks.db');
      const v1 = new Database(file);
      v1.exec(`CREATE TABLE webhooks (project TEXT NOT NULL, id TEXT NOT NULL, url TEXT NOT NULL, events TEXT NOT NULL, collections TEXT,
        secret TEXT NOT NULL, enabled INTEGER NOT NULL DEFAULT 1, disabled_reason TEXT, consecutive_failures INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (project, id));
        CREATE TABLE plinth_data_version (component TEXT PRIMARY KEY, version INTEGER NOT NULL, release TEXT NOT NULL, migrated_at TEXT NOT NULL);
        INSERT INTO plinth_data_version VALUES ('webhooks', 1, '0.1.0', '2026-01-01T00:00:00.000Z');
        INSERT INTO webhooks VALUES ('proj-one', 'wh_old', 'https://example.com/h', '["record.created"]', NULL, 's', 1, NULL, 0, '2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z');`);
      v1.close();
      const db = openSqlite(file);
      const store = new SqliteWebhookStore(db);
      expect(await store.get(asProjectId('proj-one'), 'wh_old')).toMatchObject({ created_at: '2026-01-01T00:00:00.000Z', enabled_at: '2026-01-01T00:00:00.000Z' });
      expect(db.prepare("SELECT version FROM plinth_data_version WHERE component = 'webhooks'").get()).toEqual({ version: 2 });
      db.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('MongoDB: replicas starting together stamp the webhooks data version once; a newer one is refused before any index', async () => {
    const db = createMingoDb();
    await Promise.all([1, 2, 3].map(() => new MongoWebhookStore(db).init()));
    expect(await db.collection('plinth_data_version').findOne({ _id: 'webhooks' } as never)).toMatchObject({ version: 0, release: '0.1.0' });
    const newer = createMingoDb();
    await newer.collection('plinth_data_version').insertOne({ _id: 'webhooks', version: 2, release: '0.9.0' } as never);
    await expect(new MongoWebhookStore(newer).init()).rejects.toThrow('MongoDB database "mingo" holds webhooks data version 2 (written by Plinth 0.9.0), newer than this Plinth 0.1.0 knows (0)');
    expect((await newer.listCollections().toArray()).map((c) => c.name)).toEqual(['plinth_data_version']);
  });
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
