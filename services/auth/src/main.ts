import { createLogger, installProcessHandlers, loadConfigOrExit, refusePlaceholders, requireClusterStorage, runMain, serve } from '@plinth/shared';
import { authConfigSchema, type AuthConfig } from './config';
import { buildAuthService } from './service';

async function main(): Promise<void> {
  const config: AuthConfig = loadConfigOrExit(authConfigSchema);
  refusePlaceholders();
  requireClusterStorage('auth');
  const logger = createLogger('auth', config.LOG_LEVEL);
  const service = await buildAuthService(config, logger, { behindGatewayProxy: true });
  const served = await serve(service.app, { port: config.PORT, logger, beforeDrain: service.stopAdmission, onShutdown: service.close });
  installProcessHandlers(served.shutdown, logger);
  logger.info({ port: served.port }, 'auth listening');
}

runMain(main);
