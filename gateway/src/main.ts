import { createLogger, installProcessHandlers, loadConfigOrExit, refusePlaceholders, requireClusterStorage, runMain, serve } from '@plinth/shared';
import { sharedGatewayOptions } from './gateway-options';
import { createGatewayApp } from './app';
import { gatewayConfigSchema, parseUrlList, type GatewayConfig } from './config';
import { KeyCacheBus } from './key-cache-bus';
import { createProjectStore } from './store/from-config';
import { httpPurges } from './purge/service-purges';
import { proxyUpgrade } from './realtime-proxy';
import { proxyUpstream } from './upstreams';

/** Cluster mode: the gateway as its own process, proxying to the services' URLs. */
async function main(): Promise<void> {
  const config: GatewayConfig = loadConfigOrExit(gatewayConfigSchema);
  refusePlaceholders();
  requireClusterStorage('gateway');
  const logger = createLogger('gateway', config.LOG_LEVEL);
  const store = await createProjectStore({ mongoUrl: config.MONGO_URL, dataDir: config.PLINTH_DATA_DIR, internalSecret: config.PLINTH_INTERNAL_SECRET, commitTimeoutMs: config.PLINTH_MONGO_COMMIT_TIMEOUT_MS });
  const upstreams = {
    records: proxyUpstream('records', parseUrlList(config.RECORDS_URL), logger, config.PLINTH_INTERNAL_SECRET),
    auth: proxyUpstream('auth', parseUrlList(config.AUTH_URL), logger, config.PLINTH_INTERNAL_SECRET),
    mailer: proxyUpstream('mailer', parseUrlList(config.MAILER_URL), logger, config.PLINTH_INTERNAL_SECRET),
  };
  const realtime = config.REALTIME_URL ? proxyUpgrade('realtime', parseUrlList(config.REALTIME_URL), logger, config.PLINTH_INTERNAL_SECRET) : undefined;
  const gateway = createGatewayApp({
    store,
    upstreams,
    adminKey: config.PLINTH_ADMIN_KEY,
    publicUrl: config.PLINTH_PUBLIC_URL,
    logger,
    ...sharedGatewayOptions(config),
    // Every replica listed in each URL variable purges (and drops its caches); auth first, then
    // realtime closes the project's connections (each replica its own), records deletes the
    // data and the change events.
    purges: httpPurges(
      [
        ['auth', parseUrlList(config.AUTH_URL)],
        ...(config.REALTIME_URL ? [['realtime', parseUrlList(config.REALTIME_URL)] as [string, string[]]] : []),
        ['records', parseUrlList(config.RECORDS_URL)],
        ['mailer', parseUrlList(config.MAILER_URL)],
      ],
      config.PLINTH_INTERNAL_SECRET,
      config.PLINTH_PURGE_TIMEOUT_MS,
    ),
    // With Redis, replicas learn of revocations by pub/sub (KeyCacheBus); without it, replicas
    // sharing a SQLite project store follow its change counter; else the TTL bounds staleness.
    watchStoreChanges: !config.REDIS_URL,
    realtime,
  });
  const { app, deletion, keys, audit } = gateway;
  // Replicas share revocations through Redis pub/sub: a revoked key stops working on all at once.
  const bus = config.REDIS_URL ? await KeyCacheBus.start(config.REDIS_URL, () => keys.forgetLocal(), logger) : null;
  if (bus) keys.announceWith(() => bus.publish());
  const served = await serve(app, {
    port: config.PORT,
    logger,
    beforeDrain: () => realtime?.close(),
    onShutdown: async () => {
      deletion.close();
      await audit.close();
      for (const u of Object.values(upstreams)) u.close();
      await bus?.close();
      await store.close();
    },
  });
  // Prometheus scrapes here without the operator key; keep this port off the public network.
  const metricsServed = config.PLINTH_METRICS_PORT ? await serve(gateway.metricsApp, { port: config.PLINTH_METRICS_PORT, logger }) : null;
  installProcessHandlers(async (how) => {
    // The API first (unready, grace, drain), then the metrics listener at once.
    await served.shutdown(how);
    await metricsServed?.shutdown({ graceMs: 0 });
  }, logger);
  served.server.on('upgrade', gateway.upgrade);
  logger.info({ port: served.port, metrics_port: metricsServed?.port }, 'gateway listening');
  await deletion.resume();
  audit.start();
}

runMain(main);
