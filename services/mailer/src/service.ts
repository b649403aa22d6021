import type { Logger } from 'pino';
import type { BuiltService } from '@plinth/shared';
import { createMailerApp } from './app';
import type { MailerConfig } from './config';

/** Wires the mailer service's adapters from configuration. Used by main.ts and by standalone mode. */
export async function buildMailerService(
  config: MailerConfig,
  logger: Logger,
  opts: { logRequests?: boolean } = {},
): Promise<BuiltService> {
  const app = createMailerApp({ logger, internalSecret: config.PLINTH_INTERNAL_SECRET, logRequests: opts.logRequests });
  return { name: 'mailer', app, close: async () => {} };
}
