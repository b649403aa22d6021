/**
 * The resumable upload routes (docs/files.md "Resumable uploads"), over `UploadSessions`:
 *
 *   POST   …/files/uploads                    {collection, record_id, field, name, size} → 201 {upload}
 *   GET    …/files/uploads/{id}               → {upload, received: [part numbers]}
 *   PUT    …/files/uploads/{id}/parts/{n}     raw bytes → {part, size}
 *   POST   …/files/uploads/{id}/complete      → {record}: the file attached under the update rule
 *   DELETE …/files/uploads/{id}               → {deleted: true}
 *
 * Opening a session needs a file field of the collection and a record the caller can read; the
 * record's update rule decides at completion, as for a multipart update.
 */
import { Router, type Request, type Response } from 'express';
import { closeAfterResponse, InvalidRequestError, sendJson, type JsonValue } from '@plinth/shared';
import type { Caller } from '../operations/caller';
import type { CollectionOperations } from '../operations/collection-operations';
import type { RecordOperations } from '../operations/record-operations';
import { FILES_PATH } from './file-routes';
import { fileOptions, recordFileKey, resolveFileValues, type RecordFileWrites } from './record-file-writes';
import { fileFieldNames, releasedFiles } from './record-files';
import type { UploadSession, UploadSessions } from './upload-sessions';

const UPLOADS = `${FILES_PATH}/uploads`;
const UPLOAD = `${UPLOADS}/:upload`;

export interface UploadSessionRoutesDeps {
  sessions: UploadSessions;
  records: RecordOperations;
  collections: CollectionOperations;
  writes: RecordFileWrites;
  caller: (req: Request, res: Response) => Promise<Caller>;
}

/** Who owns a session: the user, or for a key alone its kind (a public-key caller never reaches a secret-key session). */
function ownerOf(caller: Caller): string {
  return caller.auth ? `user:${caller.auth.uid}` : `key:${caller.keyKind}`;
}

function text(body: unknown, field: string, max: number): string {
  const v = typeof body === 'object' && body !== null ? (body as { [k: string]: unknown })[field] : undefined;
  if (typeof v !== 'string' || v.length === 0 || v.length > max) throw new InvalidRequestError(`"${field}" must be a non-empty string of at most ${max} characters.`, { field });
  return v;
}

/** What a client sees of a session (the owner stays on the server). */
function view(s: UploadSession): { [k: string]: JsonValue } {
  return { id: s.id, collection: s.collection, record_id: s.record_id, field: s.field, name: s.original_name, size: s.size, part_size: s.part_size, parts: s.parts, expires_at: s.expires_at };
}

export function uploadSessionRoutes(deps: UploadSessionRoutesDeps): Router {
  const router = Router();
  const open = async (req: Request, res: Response): Promise<{ caller: Caller; session: UploadSession }> => {
    const caller = await deps.caller(req, res);
    return { caller, session: await deps.sessions.get(caller.project, String(req.params.upload), ownerOf(caller)) };
  };

  router.post(UPLOADS, async (req, res) => {
    const caller = await deps.caller(req, res);
    const collectionName = text(req.body, 'collection', 64);
    const recordId = text(req.body, 'record_id', 64);
    const field = text(req.body, 'field', 64);
    const name = text(req.body, 'name', 255);
    const size = (req.body as { size?: unknown }).size;
    if (typeof size !== 'number') throw new InvalidRequestError('"size" must be the file\'s size in bytes.', { field: 'size' });
    const collection = await deps.collections.load(caller.project, collectionName);
    const options = fileOptions(collection.fields[field]);
    if (!options) throw new InvalidRequestError(`${field} is not a file field of ${collectionName}.`, { field });
    await deps.records.get(caller, collectionName, recordId); // 404 unless the caller may read it
    const session = await deps.sessions.create({ project: caller.project, collection: collectionName, recordId, field, user: ownerOf(caller), originalName: name, size, maxSize: options.max_size });
    sendJson(req, res, 201, { upload: view(session) });
  });

  router.get(UPLOAD, async (req, res) => {
    const { session } = await open(req, res);
    sendJson(req, res, 200, { upload: view(session), received: await deps.sessions.received(session) });
  });

  router.put(`${UPLOAD}/parts/:part`, async (req, res) => {
    try {
      const { session } = await open(req, res);
      const n = /^\d{1,5}$/.test(String(req.params.part)) ? Number(req.params.part) : NaN;
      sendJson(req, res, 200, await deps.sessions.putPart(session, n, req));
    } catch (err) {
      // Refused before the body was read to its end: drop the connection rather than read the rest.
      if (!req.readableEnded) closeAfterResponse(res);
      throw err;
    }
  });

  router.post(`${UPLOAD}/complete`, async (req, res) => {
    const { caller, session } = await open(req, res);
    const collection = await deps.collections.load(caller.project, session.collection);
    const options = fileOptions(collection.fields[session.field]);
    if (!options) throw new InvalidRequestError(`${session.field} is no longer a file field of ${session.collection}.`, { field: session.field });
    const { key, meta } = await deps.sessions.assemble(session, { keyOf: (stored) => recordFileKey(caller.project, session.collection, stored), mimeTypes: options.mime_types });
    let record;
    const fields = fileFieldNames(collection.fields);
    let before;
    try {
      before = await deps.records.get(caller, session.collection, session.record_id);
      const data = resolveFileValues(collection, {}, { [session.field]: [meta] }, before);
      record = await deps.records.update(caller, session.collection, session.record_id, { data: { [session.field]: data[session.field] }, version: before.version });
    } catch (err) {
      await deps.writes.storage.delete(key).catch(() => false);
      throw err;
    }
    await deps.sessions.finish(session);
    await deps.writes.deleteFiles(caller.project, session.collection, releasedFiles(fields, before as { [k: string]: JsonValue }, record as unknown as { [k: string]: JsonValue }));
    sendJson(req, res, 200, { record });
  });

  router.delete(UPLOAD, async (req, res) => {
    const { session } = await open(req, res);
    await deps.sessions.finish(session);
    sendJson(req, res, 200, { deleted: true, id: session.id });
  });
  return router;
}
