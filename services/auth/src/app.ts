import { Router, type Express } from 'express';
import type { Logger } from 'pino';
import { createServiceApp } from '@plinth/shared';

export interface AuthAppDeps {
  logger: Logger;
  internalSecret: string;
  logRequests?: boolean;
  ready?: () => Promise<void>;
}

/** Builds the auth service's express app from injected ports. */
export function createAuthApp(deps: AuthAppDeps): Express {
  const routes = Router();
  return createServiceApp({
    name: 'auth',
    internalSecret: deps.internalSecret,
    logger: deps.logger,
    routes,
    ready: deps.ready,
    logRequests: deps.logRequests,
  });
}
