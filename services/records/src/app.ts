import type { Express } from 'express';
import type { Logger } from 'pino';
import { createServiceApp, type NonceStore, type ProjectId } from '@plinth/shared';
import type { AccessPolicy } from './domain/access-policy';
import { CollectionOperations } from './operations/collection-operations';
import { RecordImport } from './operations/record-import';
import { RecordOperations } from './operations/record-operations';
import { recordsRoutes, type AuthenticateUser } from './routes/records-routes';
import type { RecordStore } from './store/record-store';

export interface RecordsAppDeps {
  /** Cluster: nonces of accepted internal credentials, shared by every replica (Redis). */
  nonceStore?: NonceStore;
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
  /** Runs after the project's collections are gone, when the project is purged (drop caches). */
  onPurge?: (project: ProjectId) => void;
}

/** Deletes every collection of the project with its records and idempotency keys. Idempotent. */
export async function purgeRecords(store: RecordStore, project: ProjectId): Promise<void> {
  for (const c of await store.listCollections(project)) await store.deleteCollection(project, c.name);
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
    nonceStore: deps.nonceStore,
    purge: async (project) => {
      await purgeRecords(deps.store, project);
      deps.onPurge?.(project);
    },
  });
}
