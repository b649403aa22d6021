import { createLogger, installProcessHandlers, loadConfigOrExit, runMain, serve } from '@plinth/shared';
import { ensureDemoProject, resolveAdminKey } from './bootstrap';
import { standaloneConfigSchema, type StandaloneConfig } from './config';
import { composeStandalone } from './standalone-compose';

/** `npm start`: gateway and every service in one process, SQLite under PLINTH_DATA_DIR. */
async function main(): Promise<void> {
  const config: StandaloneConfig = loadConfigOrExit(standaloneConfigSchema);
  const logger = createLogger('plinth', config.LOG_LEVEL);
  const admin = resolveAdminKey(config.PLINTH_DATA_DIR, config.PLINTH_ADMIN_KEY);
  const plinth = await composeStandalone({ ...config, PLINTH_ADMIN_KEY: admin.key }, process.env, logger);
  const demo = await ensureDemoProject(config.PLINTH_DATA_DIR, plinth.store, plinth.gateway.keys);
  const served = await serve(plinth.gateway.app, { port: config.PORT, host: config.HOST, logger, beforeDrain: plinth.closeConnections, onShutdown: plinth.close });
  served.server.on('upgrade', plinth.gateway.upgrade);
  // Prometheus scrapes here without the operator key (same HOST as the API).
  const metricsServed = config.PLINTH_METRICS_PORT
    ? await serve(plinth.gateway.metricsApp, { port: config.PLINTH_METRICS_PORT, host: config.HOST, logger })
    : null;
  installProcessHandlers(async (how) => {
    // The API first (unready, grace, drain), then the metrics listener at once.
    await served.shutdown(how);
    await metricsServed?.shutdown({ graceMs: 0 });
  }, logger);

  const url = `http://localhost:${served.port}`;
  const lines = [
    '',
    `Plinth is running (standalone) at ${url}`,
    `  listening on:    ${config.HOST}:${served.port}${config.HOST === '127.0.0.1' ? ' (this machine only; set HOST=0.0.0.0 to accept other machines)' : ''}`,
    `  data directory:  ${config.PLINTH_DATA_DIR}`,
    `  dashboard:       ${url}/_/   (sign in with the operator key)`,
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
