/**
 * The webhook dispatcher over the MongoDB outbox (docs/webhooks.md "How deliveries are fed"), on
 * the mingo stand-in: the cursor is a document of `plinth_webhook_cursors` committed after the
 * deliveries are queued, so a dispatcher that dies before committing makes the next one enqueue
 * the same jobs again (the queue holds each once), and event ids stay `evt_<epoch>_<seq>`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Db } from 'mongodb';
import pino from 'pino';
import { asProjectId, assertWebhookJob, EmbeddedJobQueue, transactionOptions, type ChangeEventInput, type WebhookJob } from '@plinth/shared';
import { createMingoDb } from '@plinth/shared/testing/mingo-db';
import { initMongoOutbox, MongoOutboxSource, trimMongoOutbox, writeWithEvent } from '../../src/store/mongo/mongo-outbox';
import { mongoChangeSource, MONGO_WEBHOOK_CURSORS, type ChangeEventSource } from '../../src/webhooks/change-event-source';
import { MongoWebhookStore } from '../../src/webhooks/mongo-webhook-store';
import { WebhookDispatcher } from '../../src/webhooks/webhook-dispatcher';

const project = asProjectId('mongo-dispatch-test');
const logger = pino({ level: 'silent' });
let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-mongo-dispatch-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

async function setup() {
  const db: Db = createMingoDb();
  await initMongoOutbox(db);
  const store = new MongoWebhookStore(db);
  await store.init();
  const queue = new EmbeddedJobQueue<WebhookJob>({ file: path.join(dir, 'queue.db'), attempts: 3, backoffMs: 10 }, { table: 'webhook_outbox', component: 'webhook-queue', label: 'webhook', validate: assertWebhookJob });
  const at = new Date().toISOString();
  await store.insert({ id: 'wh_a', project, url: 'http://127.0.0.2/', events: ['record.created'], collections: null, secret: 's', enabled: true, disabled_reason: null, consecutive_failures: 0, created_at: at, updated_at: at, enabled_at: at });
  let n = 0;
  /** `count` writes, each committing its change event in its transaction. */
  const write = async (count: number) => {
    for (let i = 0; i < count; i++, n++) {
      const event: ChangeEventInput = { project, collection: 'c', kind: 'create', record: { id: `rec_${n}`, version: 1, created_at: at, updated_at: at }, committed_at: Date.now() };
      await writeWithEvent(db, transactionOptions(), event, async () => true, () => true);
    }
  };
  const dispatcher = (source: ChangeEventSource = mongoChangeSource(db, 'webhooks')) => new WebhookDispatcher({ source, store, queue, logger, pollMs: 10_000, leaseMs: 1, batchSize: 7 });
  const eventIds = async () => (await store.listDeliveries(project, 'wh_a', { limit: 200 })).map((d) => d.event_id).sort();
  return { db, store, queue, write, dispatcher, eventIds };
}

it('a dispatcher that dies before moving its cursor: the next enqueues the same jobs under the same event ids, the queue holds each once', async () => {
  const s = await setup();
  await s.write(10);
  const real = mongoChangeSource(s.db, 'webhooks');
  const dying: ChangeEventSource = { ...real, commit: async () => Promise.reject(new Error('killed')) };
  await expect(s.dispatcher(dying).dispatchOnce()).rejects.toThrow('killed');
  const first = await s.eventIds();
  expect(first).toHaveLength(7);
  await new Promise((r) => setTimeout(r, 5));
  // A new process: a new source over the same database.
  expect(await s.dispatcher(mongoChangeSource(s.db, 'webhooks')).dispatchOnce()).toBe(10);
  expect((await s.queue.counts()).waiting).toBe(10);
  const epoch = await new MongoOutboxSource(s.db).epoch();
  expect(await s.eventIds()).toEqual(Array.from({ length: 10 }, (_, i) => `evt_${epoch}_${i + 1}`).sort());
  expect((await s.eventIds()).filter((id) => first.includes(id))).toHaveLength(7);
  await s.queue.close();
});

it('the cursor is durable in MongoDB: a restarted dispatcher sends only what committed since', async () => {
  const s = await setup();
  await s.write(5);
  expect(await s.dispatcher().dispatchOnce()).toBe(5);
  expect(await s.db.collection(MONGO_WEBHOOK_CURSORS).findOne({ _id: 'webhooks' as never })).toMatchObject({ position: 5 });
  await new Promise((r) => setTimeout(r, 5));
  expect(await s.dispatcher().dispatchOnce()).toBe(0);
  await s.write(3);
  await new Promise((r) => setTimeout(r, 5));
  expect(await s.dispatcher().dispatchOnce()).toBe(3);
  expect((await s.queue.counts()).waiting).toBe(8);
  expect(await s.eventIds()).toHaveLength(8);
  await s.queue.close();
});

it('changes trimmed from the outbox before they were read are reported lost', async () => {
  const s = await setup();
  await s.write(5);
  await trimMongoOutbox(s.db, { maxEvents: 2, maxAgeMs: 3_600_000 });
  const source = mongoChangeSource(s.db, 'webhooks');
  const batch = await source.read(10);
  expect(batch.lost).toBe(true);
  expect(batch.events.map((e) => e.seq)).toEqual([4, 5]);
  await source.commit(batch.next);
  await s.write(1);
  expect((await source.read(10)).lost).toBe(false);
  await s.queue.close();
});
