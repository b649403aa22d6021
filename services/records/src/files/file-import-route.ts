/**
 * `PUT /v1/projects/{p}/files/{collection}/{recordId}/{name}` (operators only, raw bytes with a
 * Content-Length): the bytes of a file a record already names, brought in with its project
 * (`plinth projects import`, docs/operators.md "Moving a project"). The record's metadata — which
 * `records:import` wrote — is the authority: the body must be exactly its size, hash to its
 * SHA-256 and be of its type (sniffed from the bytes, as an upload's is), or nothing stays
 * stored. The bytes stream into the file storage (never held whole); a name that is already
 * stored is refused, so a live file is never replaced. Thumbnails are not carried: they are
 * made again from the bytes at the first download that asks for one.
 */
import { Router } from 'express';
import { closeAfterResponse, ConflictError, InvalidRequestError, NotFoundError, PayloadTooLargeError, requireOperator, sendJson } from '@plinth/shared';
import type { CollectionOperations } from '../operations/collection-operations';
import type { RecordStore } from '../store/record-store';
import { FILES_PATH } from './file-routes';
import { concat, head } from './multipart-upload';
import { fileFieldNames, filesOf } from './record-files';
import { recordFileKey } from './record-file-writes';
import { SNIFF_BYTES, sniffType } from './sniff';
import { STORED_NAME } from './stored-name';
import type { FileStorage } from './storage/file-storage';

export interface FileImportRouteDeps {
  storage: FileStorage;
  store: RecordStore;
  collections: CollectionOperations;
}

export function fileImportRoute(deps: FileImportRouteDeps): Router {
  const router = Router();
  router.put(`${FILES_PATH}/:collection/:id/:name`, async (req, res) => {
    try {
      const { project } = requireOperator(res);
      const name = String(req.params.name);
      const collectionName = String(req.params.collection);
      if (!STORED_NAME.test(name)) throw new InvalidRequestError('Not a stored file name.', { name: name.slice(0, 64) });
      const collection = await deps.collections.load(project, collectionName);
      const record = await deps.store.getRecord(project, collection, String(req.params.id));
      const meta = filesOf(fileFieldNames(collection.fields), record).find((m) => m.name === name);
      if (!meta) throw new NotFoundError('The record holds no file of that name: import the record first.', { name });
      if (Number(req.headers['content-length']) !== meta.size) {
        throw new InvalidRequestError(`The body must be the file's ${meta.size} bytes (Content-Length), as its record states.`, { size: meta.size });
      }
      const key = recordFileKey(project, collectionName, name);
      if (await deps.storage.stat(key)) throw new ConflictError('This file is already stored; a stored file is never replaced.', { name });
      const { first, rest } = await head(req, SNIFF_BYTES);
      const type = sniffType(first);
      if (type !== meta.type) throw new InvalidRequestError(`The bytes are ${type}, not ${meta.type} as the record states.`, { type, expected: meta.type });
      let stored;
      try {
        stored = await deps.storage.put(key, concat(first, rest), { maxBytes: meta.size });
      } catch (err) {
        if (err instanceof PayloadTooLargeError) throw new InvalidRequestError(`The body is larger than the file's ${meta.size} bytes.`, { size: meta.size });
        throw err;
      }
      if (stored.size !== meta.size || stored.sha256 !== meta.sha256) {
        await deps.storage.delete(key);
        throw new InvalidRequestError("The bytes do not hash to the record's SHA-256: not this file, or damaged on the way.", { name });
      }
      sendJson(req, res, 201, { file: { collection: collectionName, record: record!.id, name, size: stored.size, sha256: stored.sha256 } });
    } catch (err) {
      // Refused before the body was read to its end: drop the connection rather than read the rest.
      if (!req.readableEnded) closeAfterResponse(res);
      throw err;
    }
  });
  return router;
}
