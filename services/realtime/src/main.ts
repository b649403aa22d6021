import { createLogger, installProcessHandlers, loadConfigOrExit, serve } from '@plinth/shared';
import { realtimeConfigSchema, type RealtimeConfig } from './config';
import { buildRealtimeService } from './service';

async function main(): Promise<void> {
  const config: RealtimeConfig = loadConfigOrExit(realtimeConfigSchema);
  const logger = createLogger('realtime', config.LOG_LEVEL);
  const service = await buildRealtimeService(config, logger);
  const served = await serve(service.app, {
    port: config.PORT,
    logger,
    beforeDrain: service.closeConnections,
    onShutdown: service.close,
    drainMs: 2000,
  });
  served.server.on('upgrade', service.handleUpgrade);
  installProcessHandlers(served.shutdown, logger);
  logger.info({ port: served.port }, 'realtime listening');
}

void main();
