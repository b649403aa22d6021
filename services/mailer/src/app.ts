import { Router, type Express } from 'express';
import type { Logger } from 'pino';
import { createServiceApp, type NonceStore, type MailQueue, type Metrics, type ProjectId } from '@plinth/shared';
import { deadLetterRoutes } from './routes/dead-letter-routes';
import { mailboxRoutes } from './routes/mailbox-routes';
import type { MailboxStore } from './store/mailbox-store';

export interface MailerAppDeps {
  /** Cluster: nonces of accepted internal credentials, shared by every replica (Redis). */
  nonceStore?: NonceStore;
  logger: Logger;
  internalSecret: string;
  /** The queue whose dead letters the API shows. */
  queue: MailQueue;
  /** The dev mailbox; null when mail goes out over SMTP (the mailbox route is then a 404). */
  mailbox: MailboxStore | null;
  /** The app's registry; the mail metrics must be registered in it. */
  metrics: Metrics;
  logRequests?: boolean;
  ready?: () => Promise<void>;
}

/** Builds the mailer service's express app from injected ports. */
/** The project was deleted: its queued, retrying and dead mail jobs and its dev mailbox go. Idempotent. */
export async function purgeMail(queue: MailQueue, mailbox: MailboxStore | null, project: ProjectId): Promise<void> {
  await queue.purgeProject(project);
  await mailbox?.purgeProject(project);
}

export function createMailerApp(deps: MailerAppDeps): Express {
  const routes = Router();
  routes.use(deadLetterRoutes(deps.queue));
  if (deps.mailbox) routes.use(mailboxRoutes(deps.mailbox));
  return createServiceApp({
    name: 'mailer',
    internalSecret: deps.internalSecret,
    logger: deps.logger,
    routes,
    ready: deps.ready,
    metrics: deps.metrics,
    logRequests: deps.logRequests,
    nonceStore: deps.nonceStore,
    purge: (project) => purgeMail(deps.queue, deps.mailbox, project),
  });
}
