import { createLogger, installProcessHandlers, loadConfigOrExit, serve } from '@plinth/shared';
import { createGatewayApp } from './app';
import { gatewayConfigSchema, parseOrigins, parseUrlList, type GatewayConfig } from './config';
import { KeyCacheBus } from './key-cache-bus';
import { createProjectStore } from './store/from-config';
import { proxyUpstream } from './upstreams';

/** Cluster mode: the gateway as its own process, proxying to the services' URLs. */
async function main(): Promise<void> {
  const config: GatewayConfig = loadConfigOrExit(gatewayConfigSchema);
  const logger = createLogger('gateway', config.LOG_LEVEL);
  const store = await createProjectStore({ mongoUrl: config.MONGO_URL, dataDir: config.PLINTH_DATA_DIR });
  const upstreams = {
    records: proxyUpstream('records', parseUrlList(config.RECORDS_URL), logger, config.PLINTH_INTERNAL_SECRET),
    auth: proxyUpstream('auth', parseUrlList(config.AUTH_URL), logger, config.PLINTH_INTERNAL_SECRET),
    mailer: proxyUpstream('mailer', parseUrlList(config.MAILER_URL), logger, config.PLINTH_INTERNAL_SECRET),
  };
  const { app, keys } = createGatewayApp({
    store,
    upstreams,
    adminKey: config.PLINTH_ADMIN_KEY,
    logger,
    corsOrigins: parseOrigins(config.PLINTH_CORS_ORIGINS),
    keyCacheTtlMs: config.PLINTH_KEY_CACHE_TTL_MS,
    trustProxy: config.PLINTH_TRUST_PROXY,
    // With Redis, replicas learn of revocations by pub/sub (KeyCacheBus); without it, replicas
    // sharing a SQLite project store follow its change counter; else the TTL bounds staleness.
    watchStoreChanges: !config.REDIS_URL,
  });
  // Replicas share revocations through Redis pub/sub: a revoked key stops working on all at once.
  const bus = config.REDIS_URL ? await KeyCacheBus.start(config.REDIS_URL, () => keys.forgetLocal(), logger) : null;
  if (bus) keys.announceWith(() => bus.publish());
  const served = await serve(app, {
    port: config.PORT,
    logger,
    onShutdown: async () => {
      for (const u of Object.values(upstreams)) u.close();
      await bus?.close();
      await store.close();
    },
  });
  installProcessHandlers(served.shutdown, logger);
  logger.info({ port: served.port }, 'gateway listening');
}

void main();
