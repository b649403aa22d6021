import path from 'node:path';
import type { Router } from 'express';
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import { createMailQueueFromConfig, createWebhookQueueFromConfig, newId, openSqlite, type MailQueue, type ProjectId, type WebhookQueue } from '@plinth/shared';
import { mongoChangeSource, sqliteChangeSource, type ChangeEventSource } from './change-event-source';
import { MongoWebhookStore } from './mongo-webhook-store';
import { WebhookAdmin } from './webhook-admin';
import { webhookJobHandler } from './webhook-delivery';
import { WebhookDispatcher } from './webhook-dispatcher';
import type { Resolver } from './webhook-http';
import { WebhookPortability } from './webhook-portability';
import { webhookRoutes } from './webhook-routes';
import { WebhookSecrets } from './webhook-secrets';
import { SqliteWebhookStore } from './sqlite-webhook-store';
import type { WebhookStore } from './webhook-store';
import { TargetPolicy } from './webhook-target';
import type { WebhooksConfig } from './webhooks-config';

/** The outbox consumer whose cursor the dispatcher keeps (RENAMING IT redelivers from the start). */
export const WEBHOOK_OUTBOX_CONSUMER = 'webhooks';

export interface Webhooks {
  routes: Router;
  dispatcher: WebhookDispatcher;
  /** A change committed: dispatch now instead of at the next poll. */
  wake: () => void;
  purge: (project: ProjectId) => Promise<void>;
  close: () => Promise<void>;
}

export interface WebhooksOptions {
  /** Standalone shares one with auth (which enqueues user events). Default: from configuration. */
  queue?: WebhookQueue;
  /** Name resolution for deliveries (tests). */
  resolver?: Resolver;
  /**
   * Where the operator's mail goes when a webhook is disabled (PLINTH_OPERATOR_EMAIL). Standalone
   * passes the mail queue it shares with auth and the mailer; default: one from configuration.
   */
  mailQueue?: MailQueue;
  /** Consume the queue and dispatch (default true). */
  consume?: boolean;
  /**
   * Records on MongoDB: the records' database, where the outbox is (`plinth_outbox`, which the
   * record store must write) and where webhooks, deliveries, the lease and the cursor are kept.
   * Default: the SQLite files of the data directory.
   */
  mongoDb?: Db;
}

/** Where webhooks are kept and where the dispatcher reads changes, and what closes them. */
interface WebhookBackend {
  store: WebhookStore;
  source: ChangeEventSource;
  close: () => void;
}

async function openBackend(config: WebhooksConfig, mongoDb: Db | undefined): Promise<WebhookBackend> {
  if (mongoDb) {
    // The database is the record store's (it closes it); the cursor is a document beside the outbox.
    const store = new MongoWebhookStore(mongoDb);
    await store.init();
    return { store, source: mongoChangeSource(mongoDb, WEBHOOK_OUTBOX_CONSUMER), close: () => {} };
  }
  // The outbox (and its cursor) is in records.db; webhooks, deliveries and the lease in webhooks.db.
  const db = openSqlite(path.join(config.PLINTH_DATA_DIR, 'records.db'));
  const hooksDb = openSqlite(path.join(config.PLINTH_DATA_DIR, 'webhooks.db'));
  return {
    store: new SqliteWebhookStore(hooksDb),
    source: sqliteChangeSource(db, WEBHOOK_OUTBOX_CONSUMER),
    close: () => {
      db.close();
      hooksDb.close();
    },
  };
}

/**
 * Webhooks over the records' outbox — SQLite's `${PLINTH_DATA_DIR}/records.db`, or MongoDB's
 * `plinth_outbox` (docs/webhooks.md): the API, the dispatcher (outbox → queue, one replica at a
 * time by lease) and the queue's consumer.
 */
export async function buildWebhooks(config: WebhooksConfig & { PLINTH_INTERNAL_SECRET: string }, logger: Logger, opts: WebhooksOptions = {}): Promise<Webhooks> {
  const backend = await openBackend(config, opts.mongoDb);
  const { store } = backend;
  const ownQueue = opts.queue ? null : createWebhookQueueFromConfig(config, { logger, concurrency: config.PLINTH_WEBHOOK_CONCURRENCY });
  const queue = opts.queue ?? ownQueue!;
  const secrets = new WebhookSecrets(config.PLINTH_WEBHOOK_KEY ?? config.PLINTH_INTERNAL_SECRET);
  const policy = new TargetPolicy(config.PLINTH_WEBHOOK_ALLOW_HOSTS);
  const operator = config.PLINTH_OPERATOR_EMAIL;
  const ownMail = operator && !opts.mailQueue ? createMailQueueFromConfig(config, { logger }) : null;
  const mail = opts.mailQueue ?? ownMail;
  /** The mailer sends the operator a `webhook-disabled` mail. */
  const onDisabled = (project: ProjectId, webhook: string, url: string) => {
    if (!operator || !mail) return;
    mail
      .enqueue({ id: newId('mail_'), project, kind: 'webhook-disabled', to: operator, data: { webhook_id: webhook, url }, created_at: new Date().toISOString() })
      .catch((err: unknown) => logger.error({ err, project, webhook }, 'operator mail about a disabled webhook not enqueued'));
  };
  const admin = new WebhookAdmin(store, queue, secrets, policy);
  const dispatcher = new WebhookDispatcher({
    source: backend.source,
    store,
    queue,
    logger,
    pollMs: config.PLINTH_WEBHOOK_DISPATCH_MS,
    requeueMs: config.PLINTH_WEBHOOK_REQUEUE_MS,
  });
  const consume = opts.consume ?? true;
  if (consume) {
    queue.start(
      webhookJobHandler({
        store,
        queue,
        secrets,
        policy,
        logger,
        timeoutMs: config.PLINTH_WEBHOOK_TIMEOUT_MS,
        disableAfter: config.PLINTH_WEBHOOK_DISABLE_AFTER,
        resolver: opts.resolver,
        onDisabled,
      }),
    );
    dispatcher.start();
  }
  return {
    routes: webhookRoutes(admin, new WebhookPortability(store, secrets, admin)),
    dispatcher,
    wake: () => dispatcher.wake(),
    purge: async (project) => {
      await store.purgeProject(project);
      await queue.purgeProject(project);
    },
    close: async () => {
      await dispatcher.stop();
      if (ownQueue) await ownQueue.close();
      else if (consume) await queue.stop();
      await ownMail?.close();
      backend.close();
    },
  };
}
