/**
 * What a value of each field type looks like (docs/records.md). Timestamps are normalized to
 * `YYYY-MM-DDTHH:mm:ss.sssZ` (UTC), so stores compare and sort them as plain strings.
 */
import { InvalidRequestError, type FieldType, type JsonValue } from '@plinth/shared';
import { isScalar } from '../store/record-shape';
import { isTrustedFileMeta } from '../files/file-field';

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;

const EXPECTED: Readonly<Record<FieldType, string>> = {
  text: 'a string',
  number: 'a finite number',
  integer: 'an integer',
  boolean: 'true or false',
  timestamp: 'an ISO 8601 timestamp with a time zone, e.g. 2026-01-31T12:00:00Z',
  json: 'any JSON value',
  list: 'an array of strings, numbers and booleans',
  relation: 'a record id, or a list of record ids',
  file: 'a file sent as a multipart/form-data part (docs/files.md), or null to remove it',
  files: 'a list of files sent as multipart/form-data parts (docs/files.md), or the names of files the record holds',
};

/** The canonical form of an ISO 8601 timestamp, or null when `v` is not one. */
export function normalizeTimestamp(v: unknown): string | null {
  if (typeof v !== 'string' || !ISO_8601.test(v)) return null;
  const t = new Date(v);
  if (Number.isNaN(t.getTime()) || t.getUTCFullYear() > 9999 || t.getUTCFullYear() < 0) return null;
  return t.toISOString();
}

/** The normalized value, or undefined when `v` is not a (non-null) value of `type`. */
export function coerceValue(type: FieldType, v: unknown): JsonValue | undefined {
  switch (type) {
    case 'text':
      return typeof v === 'string' ? v : undefined;
    case 'number':
      return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
    case 'integer':
      return Number.isSafeInteger(v) ? (v as number) : undefined;
    case 'boolean':
      return typeof v === 'boolean' ? v : undefined;
    case 'timestamp':
      return normalizeTimestamp(v) ?? undefined;
    case 'json':
      return v === null || v === undefined ? undefined : (v as JsonValue);
    case 'list':
      return Array.isArray(v) && v.every(isScalar) ? (v as JsonValue[]) : undefined;
    case 'relation':
      // Relation values are checked against their definition (relation-field.ts).
      return typeof v === 'string' || (Array.isArray(v) && v.every((id) => typeof id === 'string')) ? (v as JsonValue) : undefined;
    // File metadata is written by the server only (an upload, or a file the record already held):
    // a client's JSON never names a stored file it did not upload (files/record-file-writes.ts).
    case 'file':
      return isTrustedFileMeta(v) ? (v as unknown as JsonValue) : undefined;
    case 'files':
      return Array.isArray(v) && v.every(isTrustedFileMeta) ? (v as unknown as JsonValue) : undefined;
  }
}

/** The normalized value; throws 400 naming `field` when `v` is not a value of `type`. */
export function checkValue(field: string, type: FieldType, v: unknown, where = 'data'): JsonValue {
  const ok = coerceValue(type, v);
  if (ok === undefined) {
    throw new InvalidRequestError(`Field "${field}" must be ${EXPECTED[type]}.`, { field, expected: type, in: where });
  }
  return ok;
}
