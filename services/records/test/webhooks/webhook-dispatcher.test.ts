/**
 * The webhook dispatcher over the SQLite outbox (docs/webhooks.md "How deliveries are fed"):
 * one replica dispatches at a time (the lease), and a dispatcher that dies after enqueueing but
 * before moving its cursor makes the next one enqueue the same jobs again — which the queue
 * ignores — so every committed change is on the queue exactly once.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import {
  appendEvent,
  asProjectId,
  EmbeddedJobQueue,
  assertWebhookJob,
  migrateEventLog,
  openSqlite,
  type ChangeEventInput,
  type WebhookJob,
} from '@plinth/shared';
import { sqliteChangeSource, type ChangeEventSource } from '../../src/webhooks/change-event-source';
import { SqliteWebhookStore } from '../../src/webhooks/sqlite-webhook-store';
import { WebhookDispatcher } from '../../src/webhooks/webhook-dispatcher';

const project = asProjectId('dispatch-test');
const logger = pino({ level: 'silent' });
let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-dispatch-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

async function setup() {
  const db = openSqlite(path.join(dir, 'records.db'));
  migrateEventLog(db);
  const store = new SqliteWebhookStore(db);
  const queue = new EmbeddedJobQueue<WebhookJob>({ file: path.join(dir, 'webhooks.db'), attempts: 3, backoffMs: 10 }, { table: 'webhook_outbox', component: 'webhook-queue', label: 'webhook', validate: assertWebhookJob });
  const at = new Date().toISOString();
  await store.insert({ id: 'wh_a', project, url: 'http://127.0.0.2/', events: ['record.created'], collections: null, secret: 's', enabled: true, disabled_reason: null, consecutive_failures: 0, created_at: at, updated_at: at, enabled_at: at });
  const write = (n: number) => {
    db.transaction(() => {
      for (let i = 0; i < n; i++) {
        const event: ChangeEventInput = { project, collection: 'c', kind: 'create', record: { id: `rec_${i}`, version: 1, created_at: at, updated_at: at }, committed_at: Date.now() };
        appendEvent(db, event);
      }
    })();
  };
  const dispatcher = (source: ChangeEventSource = sqliteChangeSource(db, 'webhooks'), leaseMs = 60_000) =>
    new WebhookDispatcher({ source, store, queue, logger, pollMs: 10_000, leaseMs, batchSize: 7 });
  const close = async () => {
    await queue.close();
    db.close();
  };
  return { db, store, queue, write, dispatcher, close };
}

it('only the lease holder dispatches; another replica takes over once the lease lapses', async () => {
  const s = await setup();
  s.write(20);
  const a = s.dispatcher(undefined, 200);
  const b = s.dispatcher(undefined, 200);
  expect(await a.dispatchOnce()).toBe(20);
  s.write(5);
  expect(await b.dispatchOnce()).toBe(0); // a holds the lease
  expect(await a.dispatchOnce()).toBe(5);
  s.write(3);
  await new Promise((r) => setTimeout(r, 250));
  expect(await b.dispatchOnce()).toBe(3); // a's lease lapsed
  expect(await s.store.listDeliveries(project, 'wh_a', { limit: 200 })).toHaveLength(28);
  expect((await s.queue.counts()).waiting).toBe(28);
  await s.close();
});

it('a dispatcher that dies before moving its cursor: the next enqueues the same jobs, the queue holds each once', async () => {
  const s = await setup();
  s.write(10);
  const real = sqliteChangeSource(s.db, 'webhooks');
  // Dies at the commit: everything read was enqueued, the cursor did not move.
  const dying: ChangeEventSource = { ...real, commit: async () => Promise.reject(new Error('killed')) };
  await expect(s.dispatcher(dying, 1).dispatchOnce()).rejects.toThrow('killed');
  await new Promise((r) => setTimeout(r, 5));
  expect(await s.dispatcher(real, 1).dispatchOnce()).toBe(10);
  expect((await s.queue.counts()).waiting).toBe(10);
  expect(await s.store.listDeliveries(project, 'wh_a', { limit: 200 })).toHaveLength(10);
  await s.close();
});

it('with no webhook anywhere a pass reads no change and moves the cursor to the head; a change after a webhook is made is delivered', async () => {
  const s = await setup();
  await s.store.delete(project, 'wh_a');
  s.write(50);
  const real = sqliteChangeSource(s.db, 'webhooks');
  let reads = 0;
  const counted: ChangeEventSource = { ...real, read: async (limit) => (reads++, real.read(limit)) };
  const d = s.dispatcher(counted);
  expect(await d.dispatchOnce()).toBe(0);
  expect(reads).toBe(0);
  // Back to a webhook: only what is committed after it has a receiver.
  const at = new Date().toISOString();
  await s.store.insert({ id: 'wh_b', project, url: 'http://127.0.0.2/', events: ['record.created'], collections: null, secret: 's', enabled: true, disabled_reason: null, consecutive_failures: 0, created_at: at, updated_at: at, enabled_at: at });
  s.write(3);
  expect(await d.dispatchOnce()).toBe(3);
  expect(reads).toBeGreaterThan(0);
  expect(await s.store.listDeliveries(project, 'wh_b', { limit: 200 })).toHaveLength(3);
  await s.close();
});

it('a wake after every write coalesces: 300 writes, each followed by a wake, take a handful of passes and are all enqueued once', async () => {
  const s = await setup();
  const real = sqliteChangeSource(s.db, 'webhooks');
  let commits = 0;
  const counting: ChangeEventSource = { ...real, commit: async (position) => { commits++; return real.commit(position); } };
  const d = new WebhookDispatcher({ source: counting, store: s.store, queue: s.queue, logger, pollMs: 10_000, wakeGapMs: 50, batchSize: 500 });
  d.start();
  const started = Date.now();
  for (let i = 0; i < 300; i++) {
    s.write(1);
    d.wake();
    if (i % 10 === 9) await new Promise((r) => setTimeout(r, 1));
  }
  const deadline = Date.now() + 5_000;
  while ((await s.queue.counts()).waiting < 300 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const elapsed = Date.now() - started;
  await d.stop();
  expect((await s.queue.counts()).waiting).toBe(300);
  // At most one pass per 50 ms from the first write until all were enqueued, not one per wake;
  // a pass commits after each batch it reads and once more at the end of what it found.
  expect(commits).toBeLessThanOrEqual(2 * (Math.ceil(elapsed / 50) + 1));
  await s.close();
});

it('a change committed while the webhook was disabled, or before it was made, is not delivered when read after it is enabled', async () => {
  const s = await setup();
  await s.store.update(project, 'wh_a', { enabled: false }, new Date().toISOString());
  s.write(2); // while disabled; nothing has read them yet
  await new Promise((r) => setTimeout(r, 5));
  await s.store.update(project, 'wh_a', { enabled: true }, new Date().toISOString());
  const at = new Date().toISOString();
  await s.store.insert({ id: 'wh_b', project, url: 'http://127.0.0.2/', events: ['record.created'], collections: null, secret: 's', enabled: true, disabled_reason: null, consecutive_failures: 0, created_at: at, updated_at: at, enabled_at: at });
  await new Promise((r) => setTimeout(r, 5));
  const d = s.dispatcher();
  expect(await d.dispatchOnce()).toBe(0);
  s.write(1); // after both: each takes it
  expect(await d.dispatchOnce()).toBe(2);
  expect(await s.store.listDeliveries(project, 'wh_a', { limit: 10 })).toHaveLength(1);
  expect(await s.store.listDeliveries(project, 'wh_b', { limit: 10 })).toHaveLength(1);
  await s.close();
});
