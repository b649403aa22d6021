import type { Logger } from 'pino';
import type { BuiltService } from '@plinth/shared';
import { createRecordsApp } from './app';
import type { RecordsConfig } from './config';

/** Wires the records service's adapters from configuration. Used by main.ts and by standalone mode. */
export async function buildRecordsService(
  config: RecordsConfig,
  logger: Logger,
  opts: { logRequests?: boolean } = {},
): Promise<BuiltService> {
  const app = createRecordsApp({ logger, internalSecret: config.PLINTH_INTERNAL_SECRET, logRequests: opts.logRequests });
  return { name: 'records', app, close: async () => {} };
}
