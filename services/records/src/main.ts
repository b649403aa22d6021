import { createLogger, installProcessHandlers, loadConfigOrExit, refusePlaceholders, requireClusterStorage, runMain, serve } from '@plinth/shared';
import { recordsConfigSchema, type RecordsConfig } from './config';
import { buildRecordsService } from './service';

async function main(): Promise<void> {
  const config: RecordsConfig = loadConfigOrExit(recordsConfigSchema);
  refusePlaceholders();
  requireClusterStorage('records');
  const logger = createLogger('records', config.LOG_LEVEL);
  const service = await buildRecordsService(config, logger);
  const served = await serve(service.app, { port: config.PORT, logger, beforeDrain: service.stopAdmission, onShutdown: service.close });
  installProcessHandlers(served.shutdown, logger);
  logger.info({ port: served.port }, 'records listening');
}

runMain(main);
