/**
 * File fields of records brought in with their project (`records:import` of a project archive,
 * docs/operators.md "Moving a project"): the metadata the export wrote — the same stored name,
 * size, type, SHA-256 and time — so the record reads back identical. It is accepted only in that
 * exact shape, within the field's limits, and only while nothing is stored under its name: a
 * record cannot be pointed at a file another record holds. The bytes follow through
 * `PUT …/files/{c}/{id}/{name}` (file-import-route.ts), which stores them only when they hash to
 * this metadata and their type is the one it states.
 */
import type { Collection } from '@plinth/shared';
import { ConflictError, InvalidRequestError } from '@plinth/shared';
import { trustFileMeta, type FileFieldOptions, type FileMeta } from './file-field';
import { fileFieldNames, filesOf } from './record-files';
import { fileOptions, recordFileKey } from './record-file-writes';
import { typeAllowed } from './sniff';
import { STORED_NAME } from './stored-name';
import type { FileStorage } from './storage/file-storage';

const SHA256 = /^[0-9a-f]{64}$/;
const MIME = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}$/;
const KEYS = ['name', 'original_name', 'size', 'type', 'sha256', 'created_at'];

function meta(field: string, options: FileFieldOptions, v: unknown, index: number): FileMeta {
  const bad = (why: string) => new InvalidRequestError(`records[${index}].${field}: ${why}`, { index, field });
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad('a file must be the metadata an export wrote ({name, original_name, size, type, sha256, created_at}).');
  const m = v as { [k: string]: unknown };
  const extra = Object.keys(m).find((k) => !KEYS.includes(k));
  if (extra !== undefined) throw bad(`unknown key "${extra.slice(0, 64)}" in a file's metadata.`);
  if (typeof m.name !== 'string' || !STORED_NAME.test(m.name)) throw bad('"name" must be a stored file name.');
  if (typeof m.original_name !== 'string' || m.original_name.length > 255) throw bad('"original_name" must be a string of at most 255 characters.');
  if (!Number.isSafeInteger(m.size) || (m.size as number) < 0 || (m.size as number) > options.max_size) throw bad(`"size" must be an integer from 0 to the field's max_size (${options.max_size}).`);
  if (typeof m.type !== 'string' || !MIME.test(m.type) || !typeAllowed(m.type, options.mime_types)) throw bad('"type" must be a type the field accepts.');
  if (typeof m.sha256 !== 'string' || !SHA256.test(m.sha256)) throw bad('"sha256" must be 64 lower-case hex digits.');
  if (typeof m.created_at !== 'string' || m.created_at.length > 40 || Number.isNaN(Date.parse(m.created_at))) throw bad('"created_at" must be an ISO 8601 timestamp.');
  return trustFileMeta({ name: m.name, original_name: m.original_name, size: m.size as number, type: m.type, sha256: m.sha256, created_at: m.created_at });
}

/**
 * The record's data with its file fields' metadata checked and accepted (as an upload's would
 * be); a 400 naming the record and field otherwise. Other fields are left to the usual checks.
 */
export function acceptImportedFiles(collection: Collection, data: { [k: string]: unknown }, index: number): { [k: string]: unknown } {
  const out = { ...data };
  for (const field of fileFieldNames(collection.fields)) {
    const v = out[field];
    if (v === undefined || v === null) continue;
    const options = fileOptions(collection.fields[field]) as FileFieldOptions;
    if (options.type === 'file') {
      out[field] = meta(field, options, v, index);
      continue;
    }
    if (!Array.isArray(v) || v.length > options.max_items) {
      throw new InvalidRequestError(`records[${index}].${field} must be a list of at most ${options.max_items} files' metadata.`, { index, field });
    }
    out[field] = v.map((item) => meta(field, options, item, index));
  }
  const names = filesOf(fileFieldNames(collection.fields), out).map((m) => m.name);
  if (new Set(names).size !== names.length) throw new InvalidRequestError(`records[${index}] holds the same file twice.`, { index });
  return out;
}

/** 409 when a file a new record names is already stored: it would share another record's bytes. */
export async function refuseStoredFiles(storage: FileStorage, project: string, collection: Collection, records: ReadonlyArray<{ [k: string]: unknown }>): Promise<void> {
  const fields = fileFieldNames(collection.fields);
  if (fields.length === 0) return;
  const seen = new Set<string>();
  for (const record of records) {
    for (const m of filesOf(fields, record)) {
      if (seen.has(m.name) || (await storage.stat(recordFileKey(project, collection.name, m.name)))) {
        throw new ConflictError(`Record ${String(record.id)} names a file that is already stored (${m.name}); a file belongs to one record.`, { id: record.id, name: m.name });
      }
      seen.add(m.name);
    }
  }
}
