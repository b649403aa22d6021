import { createLogger, installProcessHandlers, loadConfigOrExit, refusePlaceholders, runMain, serve } from '@plinth/shared';
import { mailerConfigSchema, type MailerConfig } from './config';
import { buildMailerService } from './service';

async function main(): Promise<void> {
  const config: MailerConfig = loadConfigOrExit(mailerConfigSchema);
  refusePlaceholders();
  const logger = createLogger('mailer', config.LOG_LEVEL);
  const service = await buildMailerService(config, logger);
  const served = await serve(service.app, { port: config.PORT, logger, onShutdown: service.close });
  installProcessHandlers(served.shutdown, logger);
  logger.info({ port: served.port }, 'mailer listening');
}

runMain(main);
