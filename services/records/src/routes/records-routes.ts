/**
 * HTTP routes of the records service (contract §4, docs/records.md). Paths are the full public
 * paths; the gateway forwards them unchanged.
 */
import { Router, type Request, type Response } from 'express';
import { closeAfterResponse, requestContext, sendJson } from '@plinth/shared';
import type { AuthInfo } from '../domain/access-policy';
import { assertUserTokenHeader } from './user-token-header';
import { queryClient } from './query-client';
import type { Caller } from '../operations/caller';
import type { CollectionOperations } from '../operations/collection-operations';
import type { BatchOperations } from '../operations/batch-operations';
import type { RecordImport } from '../operations/record-import';
import type { RecordOperations } from '../operations/record-operations';
import type { RuleSimulation } from '../operations/rule-simulation';
import type { RecordsRateLimits } from './rate-limits';
import { FILES_PATH, fileRoutes, type FileRoutesDeps } from '../files/file-routes';
import { isMultipart } from '../files/multipart-upload';
import type { RecordFileWrites } from '../files/record-file-writes';
import type { Thumbnailer } from '../files/thumbnails';
import { uploadSessionRoutes } from '../files/upload-session-routes';
import { UploadSessions } from '../files/upload-sessions';

export type AuthenticateUser = (req: Request) => Promise<AuthInfo | null>;

export interface RecordsRoutesDeps {
  collections: CollectionOperations;
  records: RecordOperations;
  importer: RecordImport;
  simulation: RuleSimulation;
  authenticateUser: AuthenticateUser;
  /** Atomic batch writes (`POST …/batch`); the route is absent without it. */
  batch?: BatchOperations;
  /** Per-key and per-user request limits; none when absent (tests of other concerns). */
  rateLimits?: RecordsRateLimits;
  /** File fields, uploads and downloads (docs/files.md); without it records hold no files. */
  files?: { writes: RecordFileWrites; thumbnails: Thumbnailer; tokenSecret: string; isSessionRevoked?: FileRoutesDeps['isSessionRevoked'] };
}

const COLLECTIONS = '/v1/projects/:project/collections';
const COLLECTION = `${COLLECTIONS}/:collection`;
const RECORDS = `${COLLECTION}/records`;
const RECORD = `${RECORDS}/:id`;
const BATCH = '/v1/projects/:project/batch';

function param(req: Request, name: string): string {
  return String(req.params[name]);
}

export function recordsRoutes(deps: RecordsRoutesDeps): Router {
  const { collections, records, importer, simulation, authenticateUser, rateLimits } = deps;
  const router = Router();
  if (rateLimits) router.use([COLLECTIONS, BATCH, FILES_PATH], rateLimits.admit);
  const files = deps.files;

  /**
   * Record operations resolve the user token (X-Db-User-Token) unless the secret key is used. A
   * public-key request with a token counts against its user's rate limit once the token is good,
   * and as anonymous when it is not (rate-limits.ts).
   */
  async function caller(req: Request, res: Response): Promise<Caller> {
    const ctx = requestContext(res);
    if (ctx.keyKind === 'secret') return { project: ctx.project, keyKind: ctx.keyKind, auth: null };
    assertUserTokenHeader(req.headers);
    let auth: AuthInfo | null;
    try {
      auth = await authenticateUser(req);
    } catch (err) {
      await rateLimits?.anonymous(res);
      throw err;
    }
    if (rateLimits) await (auth ? rateLimits.user(res, auth.uid) : rateLimits.anonymous(res));
    return { project: ctx.project, keyKind: ctx.keyKind, auth };
  }
  /** A caller whose queries wait for capacity in their own share, and are dropped if the client goes. */
  async function querying(req: Request, res: Response): Promise<Caller> {
    const c = await caller(req, res);
    return { ...c, client: queryClient(req, res, c.keyKind, c.auth) };
  }
  /** Collection operations read no user token: the request counts as anonymous if it had one. */
  const keyOnly = async (res: Response): Promise<Caller> => {
    const ctx = requestContext(res);
    await rateLimits?.anonymous(res);
    return { project: ctx.project, keyKind: ctx.keyKind, auth: null };
  };

  // The record routes first, the hottest first: express tries the routes in order, and each
  // route passed over costs a path match. No two routes match the same method and path.
  router.get(RECORD, async (req, res) => {
    sendJson(req, res, 200, { record: await records.get(await querying(req, res), param(req, 'collection'), param(req, 'id'), req.query) });
  });
  router.get(RECORDS, async (req, res) => {
    sendJson(req, res, 200, await records.query(await querying(req, res), param(req, 'collection'), req.query));
  });
  router.post(RECORDS, async (req, res) => {
    const who = await refusingUpload(req, res, () => caller(req, res));
    const created = files
      ? await refusingUpload(req, res, () => files.writes.create(who, param(req, 'collection'), req, req.body, req.get('idempotency-key')))
      : await records.create(who, param(req, 'collection'), req.body, req.get('idempotency-key'));
    if (created.replayed) res.set('Idempotent-Replayed', 'true');
    sendJson(req, res, 201, { record: created.record });
  });
  router.patch(RECORD, async (req, res) => {
    const who = await refusingUpload(req, res, () => caller(req, res));
    const record = files
      ? await refusingUpload(req, res, () => files.writes.update(who, param(req, 'collection'), param(req, 'id'), req, req.body, req.query.version))
      : await records.update(who, param(req, 'collection'), param(req, 'id'), req.body);
    sendJson(req, res, 200, { record });
  });
  router.delete(RECORD, async (req, res) => {
    const id = param(req, 'id');
    const who = await caller(req, res);
    if (files) await files.writes.delete(who, param(req, 'collection'), id, req.query.version);
    else await records.delete(who, param(req, 'collection'), id, req.query.version);
    sendJson(req, res, 200, { deleted: true, id });
  });
  if (deps.batch) {
    const batch = deps.batch;
    router.post(BATCH, async (req, res) => {
      const answer = await batch.run(await caller(req, res), req.body, req.get('idempotency-key'));
      if (answer.replayed) res.set('Idempotent-Replayed', 'true');
      sendJson(req, res, 200, { results: answer.results });
    });
  }
  // Custom method (`records:import`): the colon is escaped so it is not read as a parameter.
  router.post(`${RECORDS}\\:import`, async (req, res) => {
    sendJson(req, res, 200, await importer.import(await keyOnly(res), param(req, 'collection'), req.body));
  });
  router.get(COLLECTIONS, async (req, res) => {
    sendJson(req, res, 200, { collections: await collections.list(await keyOnly(res)) });
  });
  router.post(COLLECTIONS, async (req, res) => {
    sendJson(req, res, 201, { collection: await collections.create(await keyOnly(res), req.body) });
  });
  router.get(COLLECTION, async (req, res) => {
    sendJson(req, res, 200, { collection: await collections.load((await keyOnly(res)).project, param(req, 'collection')) });
  });
  router.patch(COLLECTION, async (req, res) => {
    sendJson(req, res, 200, { collection: await collections.update(await keyOnly(res), param(req, 'collection'), req.body) });
  });
  router.delete(COLLECTION, async (req, res) => {
    const name = param(req, 'collection');
    const who = await keyOnly(res);
    await collections.delete(who, name);
    await files?.writes.deleteCollection(who.project, name);
    sendJson(req, res, 200, { deleted: true, name });
  });

  router.post(`${COLLECTION}/rules/simulate`, async (req, res) => {
    sendJson(req, res, 200, await simulation.simulate(await keyOnly(res), param(req, 'collection'), req.body));
  });

  router.post(`${COLLECTION}/rules/validate`, async (req, res) => {
    sendJson(req, res, 200, await simulation.validate(await keyOnly(res), param(req, 'collection'), req.body));
  });

  router.get(`${COLLECTION}/aggregate`, async (req, res) => {
    sendJson(req, res, 200, await records.aggregate(await querying(req, res), param(req, 'collection'), req.query));
  });

  router.post(`${COLLECTION}/subscribe`, async (req, res) => {
    sendJson(req, res, 200, { subscription: await records.subscribe(await querying(req, res), param(req, 'collection'), req.body) });
  });
  if (files) {
    router.use(uploadSessionRoutes({ sessions: new UploadSessions(files.writes.storage), records, collections, writes: files.writes, caller }));
    router.use(
      fileRoutes({ storage: files.writes.storage, records, collections, thumbnails: files.thumbnails, tokenSecret: files.tokenSecret, caller: querying, isSessionRevoked: files.isSessionRevoked }),
    );
  }
  return router;
}

/**
 * A multipart write refused before its body was read to the end: the answer closes the
 * connection, so the rest of the body (a 1 GB upload against a 5 MB limit) is never read.
 */
async function refusingUpload<T>(req: Request, res: Response, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isMultipart(req) && !req.readableEnded) closeAfterResponse(res);
    throw err;
  }
}
