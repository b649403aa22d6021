import { createLogger, exitOnConfigError, installProcessHandlers, loadConfigOrExit, serve } from '@plinth/shared';
import { createGatewayApp } from './app';
import { gatewayConfigSchema, parseOrigins, parseUrlList, type GatewayConfig } from './config';
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
  const { app } = createGatewayApp({
    store,
    upstreams,
    adminKey: config.PLINTH_ADMIN_KEY,
    logger,
    corsOrigins: parseOrigins(config.PLINTH_CORS_ORIGINS),
    keyCacheTtlMs: config.PLINTH_KEY_CACHE_TTL_MS,
    trustProxy: config.PLINTH_TRUST_PROXY,
    bodyTimeoutMs: config.PLINTH_BODY_TIMEOUT_MS,
  });
  const served = await serve(app, {
    port: config.PORT,
    logger,
    onShutdown: async () => {
      for (const u of Object.values(upstreams)) u.close();
      await store.close();
    },
  });
  installProcessHandlers(served.shutdown, logger);
  logger.info({ port: served.port }, 'gateway listening');
}

// A start-up ConfigError (bad variable, unwritable PLINTH_DATA_DIR) is one line and exit 1.
main().catch(exitOnConfigError);
