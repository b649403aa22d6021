import { Router, type Express } from 'express';
import type { Logger } from 'pino';
import { createServiceApp } from '@plinth/shared';

export interface RecordsAppDeps {
  logger: Logger;
  internalSecret: string;
  logRequests?: boolean;
  ready?: () => Promise<void>;
}

/** Builds the records service's express app from injected ports. */
export function createRecordsApp(deps: RecordsAppDeps): Express {
  const routes = Router();
  return createServiceApp({
    name: 'records',
    internalSecret: deps.internalSecret,
    logger: deps.logger,
    routes,
    ready: deps.ready,
    logRequests: deps.logRequests,
  });
}
