import type { Express } from 'express';
import type { Logger } from 'pino';
import { createServiceApp } from '@plinth/shared';
import type { AccessPolicy } from './domain/access-policy';
import { CollectionOperations } from './operations/collection-operations';
import { RecordImport } from './operations/record-import';
import { RecordOperations } from './operations/record-operations';
import { recordsRoutes, type AuthenticateUser } from './routes/records-routes';
import type { RecordStore } from './store/record-store';

export interface RecordsAppDeps {
  logger: Logger;
  internalSecret: string;
  store: RecordStore;
  /** Decides every record operation made without the secret key (DESIGN.md §6). */
  policy: AccessPolicy;
  /** Verifies the `X-Db-User-Token` of a request; null when there is none. Default: always null. */
  authenticateUser?: AuthenticateUser;
  logRequests?: boolean;
  /** Defaults to pinging the store. */
  ready?: () => Promise<void>;
  clock?: () => Date;
}

/** Builds the records service's express app from injected ports. */
export function createRecordsApp(deps: RecordsAppDeps): Express {
  const collections = new CollectionOperations(deps.store, deps.policy, deps.clock);
  const records = new RecordOperations(deps.store, deps.policy, collections, deps.clock);
  const importer = new RecordImport(deps.store, collections);
  const routes = recordsRoutes({ collections, records, importer, authenticateUser: deps.authenticateUser ?? (async () => null) });
  return createServiceApp({
    name: 'records',
    internalSecret: deps.internalSecret,
    logger: deps.logger,
    routes,
    ready: deps.ready ?? (() => deps.store.ping()),
    logRequests: deps.logRequests,
  });
}
