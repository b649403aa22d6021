import { createLogger, exitOnConfigError, installProcessHandlers, loadConfigOrExit, serve } from '@plinth/shared';
import { recordsConfigSchema, type RecordsConfig } from './config';
import { buildRecordsService } from './service';

async function main(): Promise<void> {
  const config: RecordsConfig = loadConfigOrExit(recordsConfigSchema);
  const logger = createLogger('records', config.LOG_LEVEL);
  const service = await buildRecordsService(config, logger);
  const served = await serve(service.app, { port: config.PORT, logger, onShutdown: service.close });
  installProcessHandlers(served.shutdown, logger);
  logger.info({ port: served.port }, 'records listening');
}

// A start-up ConfigError (bad variable, unwritable PLINTH_DATA_DIR) is one line and exit 1.
main().catch(exitOnConfigError);
