/**
 * The file routes of the records service (docs/files.md "Downloading", "File tokens"):
 * `GET /v1/projects/{p}/files/{collection}/{recordId}/{name}` (and `?thumb=WxH`, `?token=`),
 * allowed when the record's read rule lets the caller read the record, and
 * `POST /v1/projects/{p}/files/token`, a short-lived token bound to the caller's user for
 * `<img src>`, which cannot send headers.
 */
import { createHash } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import { InvalidRequestError, NotFoundError, UnauthorizedError, requestContext, sendJson, type ProjectId } from '@plinth/shared';
import type { Caller } from '../operations/caller';
import type { CollectionOperations } from '../operations/collection-operations';
import type { RecordOperations } from '../operations/record-operations';
import { isFileMeta, parseThumbSpec, type FileMeta } from './file-field';
import { FILE_TOKEN_TTL_SECONDS, issueFileToken, verifyFileToken } from './file-token';
import { fileFieldNames } from './record-files';
import { fileOptions, recordFileKey } from './record-file-writes';
import { sendFile } from './serve-file';
import { STORED_NAME } from './stored-name';
import { fileKey, type FileStorage } from './storage/file-storage';
import { THUMBNAIL_SOURCES, thumbType, type Thumbnailer } from './thumbnails';

export const FILES_PATH = '/v1/projects/:project/files';
const FILE = `${FILES_PATH}/:collection/:id/:name`;

export interface FileRoutesDeps {
  storage: FileStorage;
  records: RecordOperations;
  collections: CollectionOperations;
  thumbnails: Thumbnailer;
  /** Signs file tokens (derived from the internal secret: every replica shares it). */
  tokenSecret: string;
  /** The caller of a request with a project key (and its user token, when sent). */
  caller: (req: Request, res: Response) => Promise<Caller>;
  /** Whether a user session was ended (sign-out, disable, delete…) after `iat`: a file token issued under it stops working. */
  isSessionRevoked?: (project: ProjectId, sid: string, iat: number) => Promise<boolean>;
}

/** The token's `ttl_seconds`: 1 to FILE_TOKEN_TTL_SECONDS (the default). */
function ttlOf(body: unknown): number {
  const v = typeof body === 'object' && body !== null ? (body as { ttl_seconds?: unknown }).ttl_seconds : undefined;
  if (v === undefined) return FILE_TOKEN_TTL_SECONDS;
  if (!Number.isInteger(v) || (v as number) < 1 || (v as number) > FILE_TOKEN_TTL_SECONDS) {
    throw new InvalidRequestError(`"ttl_seconds" must be an integer from 1 to ${FILE_TOKEN_TTL_SECONDS}.`, { field: 'ttl_seconds' });
  }
  return v as number;
}

export function fileRoutes(deps: FileRoutesDeps): Router {
  const router = Router();

  router.post(`${FILES_PATH}/token`, async (req, res) => {
    const caller = await deps.caller(req, res);
    const auth = caller.auth;
    const issued = issueFileToken(
      deps.tokenSecret,
      {
        project: caller.project,
        uid: auth?.uid ?? null,
        sid: auth?.sid ?? null,
        ...(auth?.iat !== undefined ? { iat: auth.iat } : {}),
        ...(auth ? { user: { email: auth.email, email_verified: auth.email_verified, claims: auth.claims } } : {}),
      },
      Math.floor(Date.now() / 1000),
      ttlOf(req.body),
    );
    sendJson(req, res, 200, issued);
  });

  /** The caller a download is judged as: the token's user (as a public-key caller), or the request's own. */
  async function downloader(req: Request, res: Response): Promise<Caller> {
    const ctx = requestContext(res);
    const token = req.query.token;
    if (token !== undefined) {
      const claims = typeof token === 'string' ? verifyFileToken(deps.tokenSecret, token, ctx.project) : null;
      if (!claims) throw new UnauthorizedError('The file token is invalid or has expired; ask for a new one (POST …/files/token).');
      if (claims.sid !== null && deps.isSessionRevoked && (await deps.isSessionRevoked(ctx.project, claims.sid, claims.iat ?? 0))) {
        throw new UnauthorizedError('The session this file token was issued to has ended (signed out, or the user was disabled or deleted).');
      }
      const auth = claims.uid === null ? null : { uid: claims.uid, email: claims.user?.email ?? null, email_verified: claims.user?.email_verified ?? false, claims: claims.user?.claims ?? {}, exp: claims.exp };
      return { project: ctx.project, keyKind: 'public', auth };
    }
    if (ctx.keyKind === 'none') throw new UnauthorizedError('Send a project key (Authorization: Bearer …) or a file token (?token=).');
    return deps.caller(req, res);
  }

  const download = async (req: Request, res: Response): Promise<void> => {
    const name = String(req.params.name);
    const collectionName = String(req.params.collection);
    // Nothing that is not a stored name reaches a lookup or the storage (no paths, no dots).
    if (!STORED_NAME.test(name)) throw new InvalidRequestError('Not a stored file name.', { name: name.slice(0, 64) });
    const caller = await downloader(req, res);
    const record = await deps.records.get(caller, collectionName, String(req.params.id));
    const collection = await deps.collections.load(caller.project, collectionName);
    let meta: FileMeta | undefined;
    let field = '';
    for (const f of fileFieldNames(collection.fields)) {
      const v = record[f];
      const found = (Array.isArray(v) ? v : [v]).find((m) => isFileMeta(m) && m.name === name);
      if (found) {
        meta = found as unknown as FileMeta;
        field = f;
        break;
      }
    }
    if (!meta) throw new NotFoundError('The record holds no file of that name.', { name });
    const key = recordFileKey(caller.project, collectionName, name);
    const thumb = req.query.thumb;
    if (thumb !== undefined) {
      const spec = typeof thumb === 'string' ? parseThumbSpec(thumb) : null;
      const allowed = fileOptions(collection.fields[field])?.thumbs ?? [];
      if (!spec || !allowed.includes(thumb as string)) {
        throw new InvalidRequestError(`"thumb" must be one of the field's thumbs: ${allowed.join(', ') || '(none)'}.`, { field, thumbs: allowed });
      }
      if (THUMBNAIL_SOURCES.has(meta.type)) {
        const target = fileKey(caller.project, collectionName, `thumbs_${name}`, thumb as string);
        await deps.thumbnails.ensure(key, meta.type, target, spec);
        const stat = await deps.storage.stat(target);
        if (!stat) throw new NotFoundError('File not found.');
        const sha256 = createHash('sha256').update(`${meta.sha256}/${thumb as string}`).digest('hex');
        await sendFile(req, res, deps.storage, target, { ...meta, size: stat.size, type: thumbType(meta.type), sha256 });
        return;
      }
    }
    await sendFile(req, res, deps.storage, key, meta);
  };
  router.get(FILE, download);
  router.head(FILE, download);
  return router;
}
