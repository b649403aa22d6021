/**
 * Record writes that carry files (docs/files.md "Uploading"): a multipart create or update is
 * read as a stream (multipart-upload.ts), each file stored before the record is written; the
 * record's file fields then hold the stored files' metadata, and the record write itself — with
 * its create/update rule, which sees `data.<field>.size` and `.type` — decides. A refused or
 * failed write deletes what the request stored; the files a committed write let go of (an update
 * that no longer holds them, a delete) are deleted after the commit. What a crash leaves between
 * the two is the orphan sweeper's (orphan-sweeper.ts).
 */
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { InvalidRequestError, type Collection, type FieldDefinition, type JsonValue, type RecordDoc } from '@plinth/shared';
import type { Caller } from '../operations/caller';
import type { CollectionOperations } from '../operations/collection-operations';
import type { Created, RecordOperations, WriteResult } from '../operations/record-operations';
import type { RecordStore } from '../store/record-store';
import { DEFAULT_MAX_FILE_SIZE, DEFAULT_MAX_ITEMS, isFileMeta, trustFileMeta, type FileFieldOptions, type FileMeta } from './file-field';
import { isMultipart, readMultipartUpload, type ParsedUpload } from './multipart-upload';
import { fileFieldNames, filesOf, releasedFiles } from './record-files';
import { fileKey, type FileKey, type FileStorage } from './storage/file-storage';

/** The options of a stored file field definition. */
export function fileOptions(def: FieldDefinition | undefined): FileFieldOptions | null {
  if (!def || (def.type !== 'file' && def.type !== 'files')) return null;
  return {
    type: def.type,
    max_size: def.max_size ?? DEFAULT_MAX_FILE_SIZE,
    mime_types: def.mime_types ?? [],
    max_items: def.type === 'file' ? 1 : (def.max_items ?? DEFAULT_MAX_ITEMS),
    thumbs: def.thumbs ?? [],
  };
}

/** Where a file of a record of `collection` is stored. */
export function recordFileKey(project: string, collection: string, name: string): FileKey {
  return fileKey(project, collection, name);
}

function dataOf(body: unknown): { [k: string]: unknown } | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const data = (body as { data?: unknown }).data;
  return typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as { [k: string]: unknown }) : null;
}

function nameOf(v: unknown): string | null {
  if (typeof v === 'string') return v;
  return isFileMeta(v) ? v.name : null;
}

/**
 * The record's file fields as the write sets them: uploaded files, files it already held that the
 * client names (by name or with their metadata) to keep, null to remove. Anything else a client
 * sends for a file field is a 400: metadata comes from the server only.
 */
export function resolveFileValues(
  collection: Collection,
  data: { [k: string]: unknown },
  uploads: { [field: string]: FileMeta[] },
  before: RecordDoc | null,
): { [k: string]: unknown } {
  const out: { [k: string]: unknown } = { ...data };
  for (const field of fileFieldNames(collection.fields)) {
    const options = fileOptions(collection.fields[field]) as FileFieldOptions;
    const given = Object.hasOwn(data, field) ? data[field] : undefined;
    const uploaded = uploads[field] ?? [];
    const held = filesOf([field], before);
    const keep = (v: unknown): FileMeta => {
      const name = nameOf(v);
      const meta = held.find((m) => m.name === name);
      if (!meta) throw new InvalidRequestError(`Field "${field}" names a file this record does not hold; upload files as multipart/form-data parts.`, { field });
      return trustFileMeta(meta);
    };
    if (options.type === 'file') {
      if (uploaded.length > 0) out[field] = trustFileMeta(uploaded[0] as FileMeta);
      else if (given !== undefined && given !== null) out[field] = keep(given);
      continue;
    }
    if (given === undefined && uploaded.length === 0) continue;
    if (given !== undefined && given !== null && !Array.isArray(given)) {
      throw new InvalidRequestError(`Field "${field}" must be a list of the names of files the record holds, or null.`, { field });
    }
    const kept = given === undefined ? held.map(trustFileMeta) : given === null ? [] : given.map(keep);
    const list = [...kept, ...uploaded.map(trustFileMeta)];
    if (list.length > options.max_items) throw new InvalidRequestError(`${field} holds at most ${options.max_items} file(s).`, { field });
    out[field] = list;
  }
  return out;
}

export interface RecordFileWritesDeps {
  storage: FileStorage;
  records: RecordOperations;
  collections: CollectionOperations;
  store: RecordStore;
  logger: Logger;
  /** Told of each project a file was stored for (the orphan sweeps, project-file-sweeps.ts). */
  onStored?: (project: Caller['project']) => void;
}

/**
 * Every record create, update and delete goes through here (records-routes.ts): the collection is
 * loaded once and handed to RecordOperations, so a collection without file fields costs nothing more.
 */
export class RecordFileWrites {
  constructor(private readonly deps: RecordFileWritesDeps) {}

  get storage(): FileStorage {
    return this.deps.storage;
  }

  private async upload(req: IncomingMessage, caller: Caller, collection: Collection): Promise<ParsedUpload> {
    this.deps.onStored?.(caller.project);
    const parsed = await readMultipartUpload(req, this.deps.storage, {
      field: (name) => (Object.hasOwn(collection.fields, name) ? fileOptions(collection.fields[name]) : null),
      keyOf: (stored) => recordFileKey(caller.project, collection.name, stored),
    });
    for (const list of Object.values(parsed.files)) list.forEach(trustFileMeta);
    return parsed;
  }

  private async discard(upload: ParsedUpload | null): Promise<void> {
    if (!upload) return;
    await Promise.all(upload.keys.map((k) => this.deps.storage.delete(k).catch(() => false)));
  }

  /** Deletes a stored file and its thumbnails; failures are logged (the sweeper is the backstop). */
  async deleteFiles(project: string, collection: string, names: readonly string[]): Promise<void> {
    for (const name of names) {
      try {
        await this.deps.storage.delete(recordFileKey(project, collection, name));
        await this.deps.storage.deletePrefix(recordFileKey(project, collection, `thumbs_${name}`));
      } catch (err) {
        this.deps.logger.warn({ err, project, collection }, 'file not deleted; the orphan sweeper will remove it');
      }
    }
  }

  /** After a collection was deleted: its files (and their thumbnails) go. */
  async deleteCollection(project: string, collection: string): Promise<void> {
    try {
      await this.deps.storage.deletePrefix(fileKey(project, collection));
    } catch (err) {
      this.deps.logger.warn({ err, project, collection }, 'files of a deleted collection not deleted; the orphan sweeper will remove them');
    }
  }

  /** `POST …/records`, JSON or multipart. */
  async create(caller: Caller, name: string, req: IncomingMessage, rawBody: unknown, idempotencyKey: string | undefined): Promise<Created> {
    const collection = await this.deps.collections.load(caller.project, name);
    const multipart = isMultipart(req);
    if (!multipart && fileFieldNames(collection.fields).length === 0) return this.deps.records.create(caller, name, rawBody, idempotencyKey, collection);
    const upload = multipart ? await this.upload(req, caller, collection) : null;
    try {
      const body = upload ? { data: upload.data } : rawBody;
      const data = dataOf(body);
      const resolved = data || upload ? { ...(body as object), data: resolveFileValues(collection, data ?? {}, upload?.files ?? {}, null) } : body;
      const created = await this.deps.records.create(caller, name, resolved, idempotencyKey, collection);
      // A replay answers with the first request's record: this request's files are not in it.
      if (created.replayed) await this.discard(upload);
      return created;
    } catch (err) {
      await this.discard(upload);
      throw err;
    }
  }

  /** `PATCH …/records/{id}`, JSON or multipart (then `?version=` carries the expected version). */
  async update(caller: Caller, name: string, id: string, req: IncomingMessage, rawBody: unknown, version: unknown): Promise<WriteResult> {
    const collection = await this.deps.collections.load(caller.project, name);
    const fields = fileFieldNames(collection.fields);
    const multipart = isMultipart(req);
    if (!multipart && fields.length === 0) return this.deps.records.update(caller, name, id, rawBody, collection);
    const upload = multipart ? await this.upload(req, caller, collection) : null;
    let before: RecordDoc | null = null;
    let result: WriteResult;
    try {
      const body: unknown = upload ? { data: upload.data, ...(version === undefined ? {} : { version: Number(version) }) } : rawBody;
      const data = dataOf(body);
      before = await this.deps.store.getRecord(caller.project, collection, id);
      const resolved = data || upload ? { ...(body as object), data: resolveFileValues(collection, data ?? {}, upload?.files ?? {}, before) } : body;
      result = await this.deps.records.update(caller, name, id, resolved, collection);
    } catch (err) {
      await this.discard(upload);
      throw err;
    }
    const current = await this.deps.store.getRecord(caller.project, collection, id);
    await this.deleteFiles(caller.project, name, releasedFiles(fields, before, current as { [k: string]: JsonValue } | null));
    return result;
  }

  /** `DELETE …/records/{id}`: the record's files go once it is gone. */
  async delete(caller: Caller, name: string, id: string, version: unknown): Promise<void> {
    const collection = await this.deps.collections.load(caller.project, name);
    const fields = fileFieldNames(collection.fields);
    if (fields.length === 0) return this.deps.records.delete(caller, name, id, version, collection);
    const before = await this.deps.store.getRecord(caller.project, collection, id);
    await this.deps.records.delete(caller, name, id, version, collection);
    if (before && !(await this.deps.store.getRecord(caller.project, collection, id))) {
      await this.deleteFiles(caller.project, name, releasedFiles(fields, before, null));
    }
  }
}
