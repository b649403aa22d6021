import type { Logger } from 'pino';
import {
  InternalClient,
  connectRedis,
  RedisNonceStore,
  redisBreaker,
  createMailQueueFromConfig,
  createMetrics,
  mailerDatabaseFile,
  type BuiltService,
  type MailQueue,
} from '@plinth/shared';
import { createMailerApp, purgeMail } from './app';
import type { MailerConfig } from './config';
import { createMailMetrics } from './metrics/mail-metrics';
import { AuthServiceMailSettings } from './store/auth-mail-settings';
import type { MailboxStore } from './store/mailbox-store';
import { noProjectMailSettings, type MailSettingsLookup } from './store/mail-settings';
import { SqliteMailboxStore } from './store/sqlite-mailbox-store';
import { createTemplateSource } from './templates/template-source';
import { MailboxTransport } from './transport/mailbox-transport';
import { SmtpTransport } from './transport/smtp-transport';
import type { Transport } from './transport/transport';
import { createDeliveryHandler } from './worker/delivery-handler';

/** SMTP when SMTP_URL is set; otherwise the dev mailbox, which the API can then read. */
function createTransport(config: MailerConfig): { transport: Transport; mailbox: MailboxStore | null } {
  if (config.SMTP_URL) return { transport: new SmtpTransport(config.SMTP_URL, config.PLINTH_SMTP_TIMEOUT_MS), mailbox: null };
  const mailbox = new SqliteMailboxStore(mailerDatabaseFile(config.PLINTH_DATA_DIR));
  return { transport: new MailboxTransport(mailbox), mailbox };
}

/** The settings lookup: the caller's, else auth over HTTP when AUTH_URL is set, else config defaults only. */
function mailSettingsFrom(config: MailerConfig, given?: MailSettingsLookup): MailSettingsLookup {
  if (given) return given;
  if (!config.AUTH_URL) return noProjectMailSettings;
  return new AuthServiceMailSettings(
    new InternalClient({ baseUrl: config.AUTH_URL, internalSecret: config.PLINTH_INTERNAL_SECRET }),
  );
}

export interface MailerServiceOptions {
  logRequests?: boolean;
  /**
   * A queue built by the caller (standalone: the SAME instance auth enqueues to, from
   * `createMailQueueFromConfig`). The caller keeps ownership: `close()` stops consuming from it
   * but does not close it. Without it the service builds its own from the config and closes it.
   */
  queue?: MailQueue;
  /**
   * Each project's `mail_from` / `redirect_url` (auth settings). Default: auth's settings API when
   * AUTH_URL is set (cluster), else the config values for every project.
   */
  mailSettings?: MailSettingsLookup;
  /**
   * Whether this instance delivers mail (default true). Standalone with several worker
   * processes: only one worker consumes the embedded outbox; the others only enqueue and serve
   * the API.
   */
  consume?: boolean;
}

/**
 * Wires the mailer from configuration and starts the delivery worker: SMTP when SMTP_URL is
 * set, else the dev mailbox; BullMQ when REDIS_URL is set, else the embedded outbox. Used by
 * main.ts and by standalone mode. `close()` stops the worker (in-flight mails finish) first.
 */
export async function buildMailerService(
  config: MailerConfig,
  logger: Logger,
  opts: MailerServiceOptions = {},
): Promise<BuiltService> {
  const ownsQueue = !opts.queue;
  const queue = opts.queue ?? createMailQueueFromConfig(config, { logger, concurrency: config.PLINTH_MAIL_CONCURRENCY });
  const { transport, mailbox } = createTransport(config);
  const metrics = createMetrics('mailer');
  const mailMetrics = createMailMetrics(metrics.registry, queue);

  if (opts.consume !== false) queue.start(
    createDeliveryHandler({
      transport,
      templates: createTemplateSource(config.PLINTH_MAIL_TEMPLATES_DIR),
      settings: mailSettingsFrom(config, opts.mailSettings),
      defaults: { mail_from: config.PLINTH_MAIL_FROM, redirect_url: config.PLINTH_PUBLIC_URL },
      metrics: mailMetrics,
      logger,
    }),
  );

  // Cluster (its own queue, on Redis): accepted internal credentials are shared by every replica.
  const redis = ownsQueue && config.REDIS_URL ? connectRedis(config.REDIS_URL, logger, 'mailer') : null;
  const app = createMailerApp({
    logger,
    internalSecret: config.PLINTH_INTERNAL_SECRET,
    queue,
    mailbox,
    metrics,
    logRequests: opts.logRequests,
    nonceStore: redis ? new RedisNonceStore(redis, config.PLINTH_NONCE_PREFIX, { breaker: redisBreaker(redis) }) : undefined,
    ready: async () => {
      await queue.counts();
    },
  });

  let closing: Promise<void> | null = null;
  const close = () => {
    closing ??= (async () => {
      await queue.stop();
      if (ownsQueue) await queue.close();
      await transport.close();
      redis?.disconnect();
    })();
    return closing;
  };
  return { name: 'mailer', app, close, purge: (project) => purgeMail(queue, mailbox, project) };
}
