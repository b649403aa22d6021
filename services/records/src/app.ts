import { Router, type Express, type Request } from 'express';
import type { Logger } from 'pino';
import {
  DB_USER_TOKEN_HEADER,
  INTERNAL_HEADERS,
  createServiceApp,
  isStreamedBody,
  type NonceStore,
  type ProjectId,
  type ResolveSubscription,
} from '@plinth/shared';
import type { AccessPolicy } from './domain/access-policy';
import { CollectionOperations } from './operations/collection-operations';
import type { PublishChange } from './operations/publish-change';
import { RecordImport } from './operations/record-import';
import { BatchOperations } from './operations/batch-operations';
import { RecordOperations } from './operations/record-operations';
import { RuleSimulation } from './operations/rule-simulation';
import { DEFAULT_LIMITS, type RecordLimits } from './domain/limits';
import { createRecordsRateLimits, type RecordsRateLimitOptions } from './routes/rate-limits';
import { clientId } from './routes/query-client';
import { recordsRoutes, type AuthenticateUser } from './routes/records-routes';
import type { RecordStore } from './store/record-store';
import { fileImportRoute } from './files/file-import-route';
import { RecordFileWrites } from './files/record-file-writes';
import { fileKey, type FileStorage } from './files/storage/file-storage';
import { Thumbnailer } from './files/thumbnails';
import type { ProjectFileSweeps } from './files/project-file-sweeps';

/** Where records' files go, and what signs file tokens (docs/files.md). */
export interface RecordsFilesDeps {
  storage: FileStorage;
  /** Signs file tokens; every replica must share it. */
  tokenSecret: string;
  thumbnails?: Thumbnailer;
  /** Sweeps orphaned files of the projects files were stored for. */
  sweeps?: ProjectFileSweeps;
  /** Whether a user session ended after `iat` (the user-token revocation check): file tokens issued under it stop working. */
  isSessionRevoked?: (project: ProjectId, sid: string, iat: number) => Promise<boolean>;
}

/** `POST /v1/projects/{p}/collections`: the one endpoint that takes a form body. */
const COLLECTIONS_PATH = /^\/v1\/projects\/[^/]+\/collections\/?$/;
/** The webhook API (its routes: webhooks/webhook-routes.ts). */
const WEBHOOKS_PATH = '/v1/projects/:project/webhooks';

export interface RecordsAppDeps {
  /** Cluster: nonces of accepted internal credentials, shared by every replica (Redis). */
  nonceStore?: NonceStore;
  logger: Logger;
  internalSecret: string;
  store: RecordStore;
  /** Decides every record operation made without the secret key (docs/rules.md). */
  policy: AccessPolicy;
  /** Verifies the `X-Db-User-Token` of a request; null when there is none. Default: always null. */
  authenticateUser?: AuthenticateUser;
  logRequests?: boolean;
  /** Defaults to pinging the store. */
  ready?: () => Promise<void>;
  clock?: () => Date;
  /** Runs after the project's collections are gone, when the project is purged (drop caches). */
  onPurge?: (project: ProjectId) => void;
  /** Announces committed changes (the EventBus); default: nothing is announced. */
  publish?: PublishChange;
  /** Forgets the project's announced changes (EventBus.purge) when the project is purged. */
  purgeEvents?: (project: ProjectId) => Promise<unknown>;
  /** Value, page and query limits (docs/records.md); defaults when absent. */
  limits?: RecordLimits;
  /** Most operations in one batch (PLINTH_MAX_BATCH_OPERATIONS); default 100. */
  maxBatchOperations?: number;
  /** Rate limits of record and collection requests; none when absent. */
  rateLimits?: RecordsRateLimitOptions;
  /** File fields, uploads and downloads; without it a collection may not define file fields' uploads. */
  files?: RecordsFilesDeps;
  /** The webhook API (docs/webhooks.md); absent: no webhook routes. */
  webhooks?: { routes: Router; purge: (project: ProjectId) => Promise<void> };
}

/** Deletes every collection of the project with its records and idempotency keys (RecordStore.purgeProject). Idempotent. */
export async function purgeRecords(store: RecordStore, project: ProjectId): Promise<void> {
  await store.purgeProject(project);
}

export interface RecordsApp {
  app: Express;
  /**
   * `POST …/collections/{c}/subscribe` without HTTP, for the realtime service in the same process
   * (standalone): the same checks, answers and errors as the route.
   */
  subscribe: ResolveSubscription;
}

/** Builds the records service's express app from injected ports. */
export function createRecordsApp(deps: RecordsAppDeps): Express {
  return buildRecordsApp(deps).app;
}

/** The app and its in-process subscribe entry point. */
export function buildRecordsApp(deps: RecordsAppDeps): RecordsApp {
  const collections = new CollectionOperations(deps.store, deps.policy, deps.clock, deps.publish);
  const records = new RecordOperations(deps.store, deps.policy, collections, deps.clock, deps.limits ?? DEFAULT_LIMITS, deps.publish);
  const importer = new RecordImport(deps.store, collections, deps.publish, deps.files?.storage);
  const batch = new BatchOperations(deps.store, deps.policy, collections, deps.clock, deps.limits ?? DEFAULT_LIMITS, deps.publish, deps.maxBatchOperations);
  const authenticateUser = deps.authenticateUser ?? (async () => null);
  const files = deps.files;
  const rateLimits = deps.rateLimits && createRecordsRateLimits(deps.rateLimits);
  const fileWrites = files && new RecordFileWrites({ storage: files.storage, records, collections, store: deps.store, logger: deps.logger, onStored: (p) => files.sweeps?.touched(p) });
  const routes = recordsRoutes({
    collections,
    records,
    importer,
    batch,
    simulation: new RuleSimulation(collections, deps.policy, deps.clock, deps.store),
    authenticateUser,
    rateLimits,
    files: files && fileWrites && {
      writes: fileWrites,
      thumbnails: files.thumbnails ?? new Thumbnailer(files.storage),
      tokenSecret: files.tokenSecret,
      ...(files.isSessionRevoked ? { isSessionRevoked: files.isSessionRevoked } : {}),
    },
  });
  const subscribe: ResolveSubscription = async (call) => {
    // The authenticator reads only these two headers of a request.
    const headers = { [INTERNAL_HEADERS.project]: call.project, ...(call.userToken === undefined ? {} : { [DB_USER_TOKEN_HEADER]: call.userToken }) };
    const auth = call.keyKind === 'secret' ? null : await authenticateUser({ headers } as unknown as Request);
    // Realtime does not pass the client's address: anonymous subscribers share one turn.
    const client = { id: clientId(call.keyKind, auth, 'realtime') };
    return records.subscribe({ project: call.project, keyKind: call.keyKind, auth, client }, call.collection, call.body);
  };
  const all = Router();
  all.use(routes);
  if (files) all.use(fileImportRoute({ storage: files.storage, store: deps.store, collections }));
  if (deps.webhooks) {
    // The webhook API is counted with the key's record calls (it takes only a secret key).
    if (rateLimits) all.use(WEBHOOKS_PATH, rateLimits.admit);
    all.use(deps.webhooks.routes);
  }
  const app = createServiceApp({
    name: 'records',
    internalSecret: deps.internalSecret,
    logger: deps.logger,
    routes: all,
    ready: deps.ready ?? (() => deps.store.ping()),
    logRequests: deps.logRequests,
    nonceStore: deps.nonceStore,
    // The contract creates collections from a form body; every other endpoint takes JSON only.
    acceptsForm: (req) => req.method === 'POST' && COLLECTIONS_PATH.test(req.path),
    // Multipart record writes are read by the route as a stream (files/multipart-upload.ts).
    streamsBody: files ? (req) => isStreamedBody(req.method, req.originalUrl, req.headers) : undefined,
    purge: async (project) => {
      await purgeRecords(deps.store, project);
      await files?.storage.deletePrefix(fileKey(project));
      // The change events carry record data: they go too, realtime replicas or not.
      await deps.purgeEvents?.(project);
      await deps.webhooks?.purge(project);
      deps.onPurge?.(project);
    },
  });
  return { app, subscribe };
}
