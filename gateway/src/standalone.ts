import cluster from 'node:cluster';
import type { RequestListener } from 'node:http';
import type { Logger } from 'pino';
import { createLogger, installProcessHandlers, loadConfigOrExit, runMain, serve, type Served } from '@plinth/shared';
import { startBackupSchedule, type BackupSchedule } from './backup/schedule';
import { ensureDemoProject, resolveAdminKey, resolveInternalSecret } from './bootstrap';
import { standaloneConfigSchema, standalonePublicUrl, type StandaloneConfig } from './config';
import { KeyAuthenticator } from './key-authenticator';
import { pickPort } from './pick-port';
import { createProjectStore } from './store/from-config';
import { startWorkerPool, workerSlot } from './workers';

type AdminKey = ReturnType<typeof resolveAdminKey>;
type DemoKeys = { public: string; secret: string } | null;

/**
 * `npm start`. PLINTH_WORKERS=1: gateway and every service in this one process. More: this
 * process is the primary — it does first-start bootstrapping (operator key, demo project) once,
 * then runs that many worker processes (each the whole of Plinth) on one port and one data dir.
 */
async function main(): Promise<void> {
  const config: StandaloneConfig = loadConfigOrExit(standaloneConfigSchema);
  const logger = createLogger('plinth', config.LOG_LEVEL);
  if (cluster.isWorker) return runWorker(config, logger);
  if (config.PORT === 0) {
    // PORT=0: any free port — chosen now, not at listen, because mail links (PLINTH_PUBLIC_URL
    // follows PORT) are composed before the server listens; workers inherit it.
    config.PORT = await pickPort(config.HOST);
    process.env.PORT = String(config.PORT);
  }
  const admin = resolveAdminKey(config.PLINTH_DATA_DIR, config.PLINTH_ADMIN_KEY);
  // The same secret for every worker and every start (sealed TOTP and webhook secrets derive from it).
  config.PLINTH_INTERNAL_SECRET = resolveInternalSecret(config.PLINTH_DATA_DIR, config.PLINTH_INTERNAL_SECRET);
  if (config.PLINTH_WORKERS === 1) return runSingle(config, logger, admin);
  return runPrimary(config, logger, admin);
}

/** One process: compose, bootstrap the demo project, serve. */
async function runSingle(config: StandaloneConfig, logger: Logger, admin: AdminKey): Promise<void> {
  const { composeStandalone } = await import('./standalone-compose');
  const plinth = await composeStandalone({ ...config, PLINTH_ADMIN_KEY: admin.key }, process.env, logger);
  const demo = await ensureDemoProject(config.PLINTH_DATA_DIR, plinth.store, plinth.gateway.keys);
  const backups = scheduleBackups(config, logger);
  const onShutdown = async () => {
    await backups?.stop();
    await plinth.close();
  };
  const served = await serve(plinth.gateway.app, { port: config.PORT, host: config.HOST, logger, beforeDrain: plinth.beginDrain, onShutdown });
  served.server.on('upgrade', plinth.gateway.upgrade);
  installServeHandlers(served, await serveMetrics(config, plinth.gateway.metricsApp, logger), logger);
  printBanner(config, served.port, admin, demo, 1);
}

/** The primary: bootstrap once, start the workers, replace a dead one, stop them all on SIGTERM/SIGINT. */
async function runPrimary(config: StandaloneConfig, logger: Logger, admin: AdminKey): Promise<void> {
  const store = await createProjectStore({ mongoUrl: config.MONGO_URL, dataDir: config.PLINTH_DATA_DIR, internalSecret: config.PLINTH_INTERNAL_SECRET!, commitTimeoutMs: config.PLINTH_MONGO_COMMIT_TIMEOUT_MS });
  const demo = await ensureDemoProject(config.PLINTH_DATA_DIR, store, new KeyAuthenticator(store, { cacheTtlMs: 0 }));
  await store.close();
  const pool = await startWorkerPool({
    workers: config.PLINTH_WORKERS,
    logger,
    env: {
      PLINTH_ADMIN_KEY: admin.key,
      // One secret for all workers, so what one signs another accepts (resolved in main).
      PLINTH_INTERNAL_SECRET: config.PLINTH_INTERNAL_SECRET!,
      // Each worker is its own event loop already: one query thread each (unless set), not two —
      // every thread is a JavaScript heap of its own (≈20 MB resident).
      PLINTH_SQLITE_READERS: process.env.PLINTH_SQLITE_READERS ?? '1',
      // …and a query first runs on the event loop for up to 2 ms: with every core busy serving,
      // the hop to a reader and back cost more than most queries (≈15 % of a query's throughput).
      PLINTH_SQLITE_INLINE_QUERY_MS: process.env.PLINTH_SQLITE_INLINE_QUERY_MS ?? '2',
      // libuv's pool runs the bcrypt of sign-ins: 4 threads in each worker would put 4N on the
      // cores; the same 4 in all (at least 2 each) measured closer to the bcrypt ceiling.
      UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? String(Math.max(2, Math.ceil(4 / config.PLINTH_WORKERS))),
    },
  }).catch(() => {
    // A worker that cannot start (a port in use, a bad data dir) has printed why, in one line.
    process.exit(1);
  });
  // Here, not in a worker: the primary serves no request, and exactly one process schedules.
  const backups = scheduleBackups(config, logger);
  let stopping = false;
  const onSignal = (signal: 'SIGTERM' | 'SIGINT') => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping workers');
    // The workers get the same signal: Ctrl+C (SIGINT) skips their grace period, SIGTERM keeps it.
    void Promise.all([backups?.stop(), pool.stop(signal)]).then(() => process.exit(0));
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  printBanner(config, pool.port, admin, demo, config.PLINTH_WORKERS);
}

/** A worker: the whole of Plinth, serving on the port the primary shares. Only worker 1 delivers mail. */
async function runWorker(config: StandaloneConfig, logger: Logger): Promise<void> {
  const slot = workerSlot();
  const { composeStandalone } = await import('./standalone-compose');
  const workerLogger = logger.child({ worker: slot });
  const plinth = await composeStandalone(
    { ...config, PLINTH_ADMIN_KEY: config.PLINTH_ADMIN_KEY ?? '' },
    process.env,
    workerLogger,
    { consumeMail: slot === 1 },
  );
  const app = plinth.gateway.app;
  const tag = String(slot);
  const served = await serve(
    (req, res) => {
      res.setHeader('X-Plinth-Worker', tag);
      app(req, res);
    },
    { port: config.PORT, host: config.HOST, logger: workerLogger, beforeDrain: plinth.beginDrain, onShutdown: plinth.close },
  );
  served.server.on('upgrade', plinth.gateway.upgrade);
  // Each worker's own metrics, on the shared metrics port: a scrape reaches one worker.
  installServeHandlers(served, await serveMetrics(config, plinth.gateway.metricsApp, workerLogger), workerLogger);
}

/** PLINTH_BACKUP_CRON: scheduled backups, run by the single process or the primary — never by a worker. */
function scheduleBackups(config: StandaloneConfig, logger: Logger): BackupSchedule | null {
  if (!config.PLINTH_BACKUP_CRON || !config.PLINTH_BACKUP_DIR) return null;
  return startBackupSchedule({ cron: config.PLINTH_BACKUP_CRON, dir: config.PLINTH_BACKUP_DIR, keep: config.PLINTH_BACKUP_KEEP, dataDir: config.PLINTH_DATA_DIR, logger });
}

/** Prometheus scrapes here without the operator key (same HOST as the API). */
async function serveMetrics(config: StandaloneConfig, metricsApp: RequestListener, logger: Logger): Promise<Served | null> {
  return config.PLINTH_METRICS_PORT ? serve(metricsApp, { port: config.PLINTH_METRICS_PORT, host: config.HOST, logger }) : null;
}

function installServeHandlers(served: Served, metrics: Served | null, logger: Logger): void {
  installProcessHandlers(async (how) => {
    // The API first (unready, grace, drain), then the metrics listener at once.
    await served.shutdown(how);
    await metrics?.shutdown({ graceMs: 0 });
  }, logger);
}

function printBanner(config: StandaloneConfig, port: number, admin: AdminKey, demo: DemoKeys, workers: number): void {
  const url = `http://localhost:${port}`;
  const lines = [
    '',
    `Plinth is running (standalone) at ${url}`,
    `  listening on:    ${config.HOST}:${port}${config.HOST === '127.0.0.1' ? ' (this machine only; set HOST=0.0.0.0 to accept other machines)' : ''}`,
    `  data directory:  ${config.PLINTH_DATA_DIR}`,
    `  workers:         ${workers}${workers > 1 ? ' (PLINTH_WORKERS)' : ''}`,
    ...(config.PLINTH_BACKUP_CRON ? [`  backups:         "${config.PLINTH_BACKUP_CRON}" into ${config.PLINTH_BACKUP_DIR} (the newest ${config.PLINTH_BACKUP_KEEP} kept)`] : []),
    `  dashboard:       ${url}/_/   (sign in with the operator key)`,
    `  mail links:      ${standalonePublicUrl({ ...config, PORT: port }, process.env)}${process.env.PLINTH_PUBLIC_URL ? ' (PLINTH_PUBLIC_URL)' : '   (set PLINTH_PUBLIC_URL to the address your users reach)'}`,
    admin.source === 'env'
      ? '  operator key:    from PLINTH_ADMIN_KEY'
      : `  operator key:    ${admin.key}   (stored in ${config.PLINTH_DATA_DIR}/credentials.json)`,
  ];
  if (demo) {
    lines.push(
      '  project "demo":',
      `    public key:    ${demo.public}`,
      `    secret key:    ${demo.secret}`,
      '',
      'Try it:',
      `  curl -s ${url}/v1/projects/demo/collections -H "Authorization: Bearer ${demo.public}"`,
    );
  } else {
    lines.push('  project "demo":  its first keys were revoked or it was deleted; create keys with `npx plinth keys create demo public`');
  }
  process.stdout.write(`${lines.join('\n')}\n\n`);
}

runMain(main);
