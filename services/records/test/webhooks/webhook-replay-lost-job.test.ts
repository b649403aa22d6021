/**
 * Replaying a dead delivery whose failed job the queue no longer holds (a Redis restarted empty,
 * a restore with an empty Redis): the delivery row keeps its event, so the replay enqueues a new
 * job from it instead of answering 404 (docs/webhooks.md "How deliveries are fed").
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { asProjectId, assertWebhookJob, EmbeddedJobQueue, NotFoundError, openSqlite, type WebhookJob } from '@plinth/shared';
import { SqliteWebhookStore } from '../../src/webhooks/sqlite-webhook-store';
import { WebhookAdmin } from '../../src/webhooks/webhook-admin';
import { WebhookSecrets } from '../../src/webhooks/webhook-secrets';
import { TargetPolicy } from '../../src/webhooks/webhook-target';

const project = asProjectId('replay-lost');
const at = '2026-01-01T00:00:00.000Z';
const event = { id: 'evt_1', type: 'record.created' as const, timestamp: at, collection: 'notes', data: { project, record: { id: 'rec_1' } } };

it('a dead letter the queue lost is enqueued again from its stored event; one without an event stays dead (404)', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-replay-'));
  const db = openSqlite(':memory:');
  const store = new SqliteWebhookStore(db);
  const queue = new EmbeddedJobQueue<WebhookJob>({ file: path.join(dir, 'webhooks.db'), attempts: 3, backoffMs: 10 }, { table: 'webhook_outbox', component: 'webhook-queue', label: 'webhook', validate: assertWebhookJob });
  const admin = new WebhookAdmin(store, queue, new WebhookSecrets('k'.repeat(32)), new TargetPolicy(''));
  try {
    await store.insert({ id: 'wh_a', project, url: 'http://127.0.0.2/', events: ['record.created'], collections: null, secret: 's', enabled: true, disabled_reason: null, consecutive_failures: 0, created_at: at, updated_at: at, enabled_at: at });
    await store.addDelivery(project, { id: 'd_1', webhook: 'wh_a', event_id: 'evt_1', event_type: 'record.created' }, at, event);
    await store.addDelivery(project, { id: 'd_old', webhook: 'wh_a', event_id: 'evt_old', event_type: 'record.created' }, at);
    for (const id of ['d_1', 'd_old']) await store.recordAttempt(project, id, { status: 'dead', last_status: 500, last_error: 'receiver answered 500' }, at);
    // Neither job is in the queue.
    expect(await admin.replay(project, 'wh_a', 'd_1')).toMatchObject({ id: 'd_1', status: 'pending' });
    expect(await queue.counts()).toMatchObject({ waiting: 1 });
    await expect(admin.replay(project, 'wh_a', 'd_old')).rejects.toBeInstanceOf(NotFoundError);
    expect(await store.getDelivery(project, 'd_old')).toMatchObject({ status: 'dead' });
  } finally {
    await queue.close();
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
