import type { Logger } from 'pino';
import type { BuiltService } from '@plinth/shared';
import { createAuthApp } from './app';
import type { AuthConfig } from './config';

/** Wires the auth service's adapters from configuration. Used by main.ts and by standalone mode. */
export async function buildAuthService(
  config: AuthConfig,
  logger: Logger,
  opts: { logRequests?: boolean } = {},
): Promise<BuiltService> {
  const app = createAuthApp({ logger, internalSecret: config.PLINTH_INTERNAL_SECRET, logRequests: opts.logRequests });
  return { name: 'auth', app, close: async () => {} };
}
