import { Router, type Express } from 'express';
import type { Logger } from 'pino';
import { createServiceApp } from '@plinth/shared';

export interface MailerAppDeps {
  logger: Logger;
  internalSecret: string;
  logRequests?: boolean;
  ready?: () => Promise<void>;
}

/** Builds the mailer service's express app from injected ports. */
export function createMailerApp(deps: MailerAppDeps): Express {
  const routes = Router();
  return createServiceApp({
    name: 'mailer',
    internalSecret: deps.internalSecret,
    logger: deps.logger,
    routes,
    ready: deps.ready,
    logRequests: deps.logRequests,
  });
}
