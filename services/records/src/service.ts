import path from 'node:path';
import type { Logger } from 'pino';
import { assertDiskSpace, connectRedis, RedisNonceStore, type BuiltService } from '@plinth/shared';
import { createRecordsApp, purgeRecords } from './app';
import type { RecordsConfig } from './config';
import type { AccessPolicy } from './domain/access-policy';
import { createRulesPolicy } from './rules/policy';
import type { AuthenticateUser } from './routes/records-routes';
import { userTokenAuthenticator, userTokenSourcesFromConfig, type UserTokenSources } from './user-tokens';
import { MongoRecordStore } from './store/mongo/mongo-record-store';
import type { RecordStore } from './store/record-store';
import { SqliteRecordStore } from './store/sqlite/sqlite-record-store';

export interface RecordsServiceOptions {
  logRequests?: boolean;
  /** Defaults to the security rules engine (DESIGN.md §6). */
  policy?: AccessPolicy;
  /** Overrides user-token verification entirely (tests). */
  authenticateUser?: AuthenticateUser;
  /**
   * Standalone mode passes the in-process auth service's JWKS and revocation list. Default: from
   * configuration (AUTH_URL, REDIS_URL).
   */
  userTokens?: UserTokenSources;
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
  const redis = !opts.userTokens && config.REDIS_URL ? connectRedis(config.REDIS_URL, logger, 'records') : null;
  const sources = opts.userTokens ?? userTokenSourcesFromConfig({ authUrl: config.AUTH_URL, internalSecret: config.PLINTH_INTERNAL_SECRET, redis });
  const policy =
    opts.policy ?? createRulesPolicy({ onRuleFailure: (info) => logger.warn({ rule: info }, 'stored rule no longer valid; denying') });
  const tokens = opts.authenticateUser ? null : userTokenAuthenticator(sources, logger);
  const app = createRecordsApp({
    logger,
    internalSecret: config.PLINTH_INTERNAL_SECRET,
    logRequests: opts.logRequests,
    store,
    policy,
    authenticateUser: opts.authenticateUser ?? tokens!,
    onPurge: (project) => tokens?.forget(project),
    nonceStore: redis ? new RedisNonceStore(redis) : undefined,
    // Redis holds the sessions user tokens are checked against: without it those reads fail.
    ready: async () => {
      await store.ping();
      if (!config.MONGO_URL) assertDiskSpace(config.PLINTH_DATA_DIR);
      await redis?.ping();
    },
  });
  return {
    name: 'records',
    app,
    purge: async (project) => {
      await purgeRecords(store, project);
      tokens?.forget(project);
    },
    close: async () => {
      await store.close();
      redis?.disconnect();
    },
  };
}
