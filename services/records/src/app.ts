import type { Express } from 'express';
import type { Logger } from 'pino';
import { createServiceApp } from '@plinth/shared';
import type { AccessPolicy } from './domain/access-policy';
import { CollectionOperations } from './operations/collection-operations';
import { RecordOperations } from './operations/record-operations';
import { DEFAULT_LIMITS, type RecordLimits } from './domain/limits';
import { createRecordsRateLimits, type RecordsRateLimitOptions } from './routes/rate-limits';
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
  /** Value, page and query limits (docs/records.md); defaults when absent. */
  limits?: RecordLimits;
  /** Rate limits of record and collection requests; none when absent. */
  rateLimits?: RecordsRateLimitOptions;
}

/** Builds the records service's express app from injected ports. */
export function createRecordsApp(deps: RecordsAppDeps): Express {
  const collections = new CollectionOperations(deps.store, deps.policy, deps.clock);
  const records = new RecordOperations(deps.store, deps.policy, collections, deps.clock, deps.limits ?? DEFAULT_LIMITS);
  const routes = recordsRoutes({
    collections,
    records,
    authenticateUser: deps.authenticateUser ?? (async () => null),
    rateLimits: deps.rateLimits && createRecordsRateLimits(deps.rateLimits),
  });
  return createServiceApp({
    name: 'records',
    internalSecret: deps.internalSecret,
    logger: deps.logger,
    routes,
    ready: deps.ready ?? (() => deps.store.ping()),
    logRequests: deps.logRequests,
  });
}
