/**
 * Webhooks when records run on MongoDB (docs/webhooks.md "What is stored where"), on the mingo
 * stand-in: a record written through the Mongo record store (its event in `plinth_outbox`, in the
 * write's transaction) reaches a real HTTP receiver as one signed POST whose `webhook-id` is
 * `evt_<epoch>_<seq>`, and a user event from auth (a `fanout` job) is delivered too; the
 * webhook and its deliveries are in the MongoDB collections.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { Webhook } from 'standardwebhooks';
import { asProjectId, createWebhookQueueFromConfig, loadConfig, type Collection, type RecordDoc, type WebhookQueue } from '@plinth/shared';
import { createMingoDb } from '@plinth/shared/testing/mingo-db';
import { startWebhookReceiver, type WebhookReceiver } from '@plinth/testing/webhook-receiver';
import { recordsConfigSchema } from '../../src/config';
import { MongoRecordStore } from '../../src/store/mongo/mongo-record-store';
import { MongoOutboxSource } from '../../src/store/mongo/mongo-outbox';
import { MongoWebhookStore, MONGO_WEBHOOK_DELIVERIES, MONGO_WEBHOOKS } from '../../src/webhooks/mongo-webhook-store';
import { newStoredWebhook } from '../../src/webhooks/webhook-store';
import { WebhookSecrets } from '../../src/webhooks/webhook-secrets';
import { buildWebhooks, type Webhooks } from '../../src/webhooks/webhooks';

const project = asProjectId('hooks-on-mongo');
const SECRET = 'an-internal-secret-of-at-least-32-characters';
const SIGNING = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
const items: Collection = { name: 'items', fields: { n: { type: 'integer' } }, rules: {}, revision: 1, created_at: '', updated_at: '' };

let dir: string;
let receiver: WebhookReceiver;
let queue: WebhookQueue;
let webhooks: Webhooks;
let store: MongoRecordStore;
const db = createMingoDb();

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-hooks-mongo-'));
  receiver = await startWebhookReceiver();
  const config = loadConfig(recordsConfigSchema, {
    PLINTH_INTERNAL_SECRET: SECRET,
    PLINTH_DATA_DIR: dir,
    PLINTH_WEBHOOK_ALLOW_HOSTS: '127.0.0.2',
    PLINTH_WEBHOOK_DISPATCH_MS: '20',
    PLINTH_WEBHOOK_POLL_MS: '10',
  });
  const logger = pino({ level: 'silent' });
  store = new MongoRecordStore(db, async () => {}, { outbox: true });
  await store.init();
  await store.createCollection(project, items);
  queue = createWebhookQueueFromConfig(config, { logger });
  webhooks = await buildWebhooks(config, logger, { queue, mongoDb: db });
  const at = new Date().toISOString();
  const hooks = new MongoWebhookStore(db);
  const secret = new WebhookSecrets(SECRET).seal(project, 'wh_mongo', SIGNING);
  await hooks.insert(newStoredWebhook({ id: 'wh_mongo', project, url: receiver.url, events: ['record.created', 'user.created'], collections: null, secret }, at));
});
afterAll(async () => {
  await webhooks.close();
  await queue.close();
  await store.close();
  await receiver.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('a record written on MongoDB is delivered once, signed, under its outbox id; the delivery is stored in MongoDB', async () => {
  const at = new Date().toISOString();
  const record: RecordDoc = { id: 'rec_1', version: 1, created_at: at, updated_at: at, n: 7 };
  await store.insertRecord(project, items, record, undefined, { project, collection: 'items', kind: 'create', record, committed_at: Date.now() });
  webhooks.wake();
  await receiver.until((r) => r.length >= 1);
  const [got] = receiver.received;
  const epoch = await new MongoOutboxSource(db).epoch();
  expect(got!.headers['webhook-id']).toBe(`evt_${epoch}_1`);
  const body = new Webhook(SIGNING).verify(got!.body, got!.headers) as { type: string; data: { record: RecordDoc } };
  expect(body).toMatchObject({ type: 'record.created', data: { record: { id: 'rec_1', n: 7 } } });
  // The attempt is recorded once the receiver has answered.
  let stored = await db.collection(MONGO_WEBHOOK_DELIVERIES).findOne({ event_id: `evt_${epoch}_1` });
  for (let i = 0; i < 200 && stored?.status !== 'delivered'; i++) {
    await new Promise((r) => setTimeout(r, 10));
    stored = await db.collection(MONGO_WEBHOOK_DELIVERIES).findOne({ event_id: `evt_${epoch}_1` });
  }
  expect(stored).toMatchObject({ webhook: 'wh_mongo', status: 'delivered', attempts: 1, last_status: 200 });
  expect(receiver.received.filter((r) => r.headers['webhook-id'] === `evt_${epoch}_1`)).toHaveLength(1);
  expect(await db.collection(MONGO_WEBHOOKS).countDocuments({ project })).toBe(1);
});

it('a user event from auth (a fanout job on the queue) is delivered from the MongoDB webhooks', async () => {
  const before = receiver.received.length;
  const event = { id: 'evt_user_1', type: 'user.created' as const, timestamp: new Date().toISOString(), data: { project, user: { id: 'usr_1', email: 'a@example.com' } } };
  await queue.enqueue({ id: `f_${event.id}`, project, kind: 'fanout', event });
  await receiver.until((r) => r.length > before);
  const got = receiver.received[before]!;
  expect(got.headers['webhook-id']).toBe('evt_user_1');
  expect(new Webhook(SIGNING).verify(got.body, got.headers)).toMatchObject({ type: 'user.created' });
});
