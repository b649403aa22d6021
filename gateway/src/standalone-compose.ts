import { randomBytes } from 'node:crypto';
import { sharedGatewayOptions } from './gateway-options';
import type { Logger } from 'pino';
import { assertDiskSpace, createAnnouncementsFromConfig, createEventBusFromConfig, createMailQueueFromConfig, createWebhookQueueFromConfig, loadConfig, markInProcess, startTrimming, type BuiltService } from '@plinth/shared';
import { buildRecordsService, recordsConfigSchema } from '@plinth/records';
import { authConfigSchema, buildAuthService } from '@plinth/auth';
import { buildMailerService, mailerConfigSchema } from '@plinth/mailer';
import { buildRealtimeService, realtimeConfigSchema } from '@plinth/realtime';
import { wakeOtherWorkersOnAppend } from './worker-events';
import { createGatewayApp, type Gateway } from './app';
import { standalonePublicUrl, type StandaloneConfig } from './config';
import { createProjectStore } from './store/from-config';
import type { ProjectStore } from './store/project-store';
import { inProcessPurges, type ServicePurge } from './purge/service-purges';
import { inProcessUpstream } from './upstreams';

export interface Standalone {
  gateway: Gateway;
  store: ProjectStore;
  services: BuiltService[];
  /** What a project deletion purges, in order (tests may add to it). */
  purges: ServicePurge[];
  /** Closes the WebSocket connections (the server's close waits for them). */
  closeConnections: () => Promise<void>;
  /**
   * The first step of a shutdown's drain: every service refuses (503) the work still queued for
   * scarce capacity (password hashing) and the WebSocket connections close.
   */
  beginDrain: () => Promise<void>;
  /** Closes services, then the project store. */
  close: () => Promise<void>;
}

/**
 * Standalone mode (docs/architecture.md "Two ways to run the same code"): every service built from the same environment and mounted
 * in-process behind one gateway. Each service still validates its own config schema.
 */
export async function composeStandalone(
  config: StandaloneConfig & { PLINTH_ADMIN_KEY: string },
  env: NodeJS.ProcessEnv,
  logger: Logger,
  opts: { consumeMail?: boolean } = {},
): Promise<Standalone> {
  const internalSecret = config.PLINTH_INTERNAL_SECRET ?? randomBytes(32).toString('base64url');
  const serviceEnv = {
    ...env,
    PLINTH_INTERNAL_SECRET: internalSecret,
    PLINTH_DATA_DIR: config.PLINTH_DATA_DIR,
    PLINTH_PUBLIC_URL: standalonePublicUrl(config, env),
  };
  const store = await createProjectStore({ mongoUrl: config.MONGO_URL, dataDir: config.PLINTH_DATA_DIR, internalSecret, commitTimeoutMs: config.PLINTH_MONGO_COMMIT_TIMEOUT_MS });
  const logRequests = false;
  const mailerConfig = loadConfig(mailerConfigSchema, serviceEnv);
  // One queue: auth enqueues to it and the mailer consumes it (embedded outbox, or BullMQ on REDIS_URL).
  const queue = createMailQueueFromConfig(mailerConfig, { logger: logger.child({ service: 'mail-queue' }), concurrency: mailerConfig.PLINTH_MAIL_CONCURRENCY });
  const authConfig = loadConfig(authConfigSchema, serviceEnv);
  // One bus of project deletions and key changes for the process: every worker over the data dir
  // (or every process on REDIS_URL) hears what another one purged or rotated.
  const announcements = await createAnnouncementsFromConfig(authConfig, logger);
  const recordsConfig = loadConfig(recordsConfigSchema, serviceEnv);
  // One webhook queue: records dispatches to it and consumes it; auth adds its user events.
  const webhookQueue = createWebhookQueueFromConfig(authConfig, { logger: logger.child({ service: 'webhook-queue' }), concurrency: recordsConfig.PLINTH_WEBHOOK_CONCURRENCY });
  const auth = await buildAuthService(authConfig, logger.child({ service: 'auth' }), { logRequests, outbox: queue, announcements, webhookQueue });
  // One event log for records (writer) and realtime (reader): SQLite in the data dir, or Redis Streams.
  const events = createEventBusFromConfig(recordsConfig);
  // Several workers: the others read an event at once, instead of at their next poll.
  wakeOtherWorkersOnAppend(events);
  const stopTrimming = startTrimming(events, 60_000, (err) => logger.warn({ err }, 'event log trim failed'));
  // Records verifies user tokens with the in-process auth service's keys and revocation list.
  const records = await buildRecordsService(recordsConfig, logger.child({ service: 'records' }), {
    logRequests,
    userTokens: { jwks: (project) => auth.keys.jwks(project), revocations: auth.revocations },
    events,
    announcements,
    webhookQueue,
    mailQueue: queue,
  });
  // Realtime resolves subscriptions through records in-process and hears auth's revocations.
  const realtime = await buildRealtimeService(loadConfig(realtimeConfigSchema, serviceEnv), logger.child({ service: 'realtime' }), {
    logRequests,
    events,
    resolve: records.subscribe,
    revocations: auth.revocations,
  });
  const mailer = await buildMailerService(mailerConfig, logger.child({ service: 'mailer' }), {
    logRequests,
    queue,
    consume: opts.consumeMail,
    mailSettings: { forProject: async (project) => auth.settings.get(project) },
  });
  // Auth first: its sessions are revoked before anything else is deleted. Then realtime closes
  // the project's connections, records deletes its data and change events, the mailer its mail.
  const purges = inProcessPurges([auth, realtime, records, mailer]);
  const gateway = createGatewayApp({
    store,
    upstreams: {
      records: inProcessUpstream(records.app),
      auth: inProcessUpstream(auth.app),
      mailer: inProcessUpstream(mailer.app),
    },
    adminKey: config.PLINTH_ADMIN_KEY,
    publicUrl: serviceEnv.PLINTH_PUBLIC_URL,
    logger,
    ...sharedGatewayOptions(config),
    ready: async () => assertDiskSpace(config.PLINTH_DATA_DIR),
    purges,
    realtime: (req, socket, head) => {
      markInProcess(req);
      realtime.handleUpgrade(req, socket, head);
    },
  });
  await gateway.deletion.resume();
  gateway.audit.start();
  const services = [realtime, records, auth, mailer];
  return {
    gateway,
    store,
    services,
    purges,
    closeConnections: () => realtime.closeConnections(),
    beginDrain: async () => {
      for (const s of services) s.stopAdmission?.();
      await realtime.closeConnections();
    },
    close: async () => {
      gateway.deletion.close();
      await gateway.audit.close();
      for (const s of services) await s.close();
      stopTrimming();
      await events.close();
      await queue.close();
      await webhookQueue.close();
      await announcements.close();
      await store.close();
    },
  };
}
