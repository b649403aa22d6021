import path from 'node:path';
import type { Logger } from 'pino';
import type { BuiltService } from '@plinth/shared';
import { createRecordsApp } from './app';
import type { RecordsConfig } from './config';
import type { AccessPolicy } from './domain/access-policy';
import { secretOnlyPolicy } from './domain/secret-only-policy';
import type { AuthenticateUser } from './routes/records-routes';
import { MongoRecordStore } from './store/mongo/mongo-record-store';
import type { RecordStore } from './store/record-store';
import { SqliteRecordStore } from './store/sqlite/sqlite-record-store';

export interface RecordsServiceOptions {
  logRequests?: boolean;
  /** Defaults to secretOnlyPolicy (public keys may only list collections). */
  policy?: AccessPolicy;
  authenticateUser?: AuthenticateUser;
}

/** MongoDB when MONGO_URL is set, else the SQLite file `${PLINTH_DATA_DIR}/records.db`. */
export async function openRecordStore(config: RecordsConfig): Promise<RecordStore> {
  if (config.MONGO_URL) return MongoRecordStore.connect(config.MONGO_URL);
  return SqliteRecordStore.open(path.join(config.PLINTH_DATA_DIR, 'records.db'));
}

/** Wires the records service's adapters from configuration. Used by main.ts and by standalone mode. */
export async function buildRecordsService(
  config: RecordsConfig,
  logger: Logger,
  opts: RecordsServiceOptions = {},
): Promise<BuiltService> {
  const store = await openRecordStore(config);
  const app = createRecordsApp({
    logger,
    internalSecret: config.PLINTH_INTERNAL_SECRET,
    logRequests: opts.logRequests,
    store,
    policy: opts.policy ?? secretOnlyPolicy,
    authenticateUser: opts.authenticateUser,
  });
  return { name: 'records', app, close: () => store.close() };
}
