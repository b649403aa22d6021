import { createLogger, exitOnConfigError, installProcessHandlers, loadConfig, serve } from '@plinth/shared';
import { recordsConfigSchema, type RecordsConfig } from './config';
import { buildRecordsService } from './service';

async function main(): Promise<void> {
  let config: RecordsConfig;
  try {
    config = loadConfig(recordsConfigSchema);
  } catch (err) {
    exitOnConfigError(err);
  }
  const logger = createLogger('records', config.LOG_LEVEL);
  const service = await buildRecordsService(config, logger);
  const served = await serve(service.app, { port: config.PORT, logger, onShutdown: service.close });
  installProcessHandlers(served.shutdown, logger);
  logger.info({ port: served.port }, 'records listening');
}

void main();
