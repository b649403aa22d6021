/**
 * What one record, one page and one query may cost (docs/records.md, "Limits"). Every value is
 * configurable; records.config.ts reads the environment variables named in the docs.
 */
import { InvalidRequestError, type FieldType, type JsonValue } from '@plinth/shared';

export interface RecordLimits {
  /** UTF-8 bytes of one `text` value. */
  maxTextBytes: number;
  /** Items of one `list` value. */
  maxListItems: number;
  /** Bytes of one `json` value, serialized. */
  maxJsonBytes: number;
  /** Nesting of arrays and objects in one `json` value (a scalar is depth 0, `[1]` depth 1). */
  maxJsonDepth: number;
  /** Bytes of a record's user fields, serialized as JSON. */
  maxRecordBytes: number;
  /** A page of query results stops early (with a cursor) once its records hold this many bytes. */
  maxPageBytes: number;
  /** A query running longer than this is stopped and answered 503. */
  queryTimeoutMs: number;
}

export const DEFAULT_LIMITS: Readonly<RecordLimits> = {
  maxTextBytes: 64 * 1024,
  maxListItems: 1000,
  maxJsonBytes: 64 * 1024,
  maxJsonDepth: 32,
  maxRecordBytes: 256 * 1024,
  maxPageBytes: 4 * 1024 * 1024,
  queryTimeoutMs: 2000,
};

/** Nesting depth of a JSON value, counted without recursion; stops counting past `max`. */
export function jsonDepth(v: JsonValue, max: number): number {
  let deepest = 0;
  const stack: Array<[JsonValue, number]> = [[v, 0]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop() as [JsonValue, number];
    if (typeof value !== 'object' || value === null) continue;
    const d = depth + 1;
    if (d > deepest) deepest = d;
    if (deepest > max) return deepest;
    for (const child of Array.isArray(value) ? value : Object.values(value)) stack.push([child, d]);
  }
  return deepest;
}

function tooLarge(field: string, message: string, limit: number, setting: string): InvalidRequestError {
  return new InvalidRequestError(message, { field, reason: 'too_large', limit, setting });
}

/** Throws 400 naming `field` when a valid value of `type` is over its size limit. */
export function checkValueSize(field: string, type: FieldType, v: JsonValue, limits: RecordLimits): void {
  if (type === 'text' && typeof v === 'string' && v.length * 3 > limits.maxTextBytes && Buffer.byteLength(v) > limits.maxTextBytes) {
    throw tooLarge(field, `Field "${field}" is longer than ${limits.maxTextBytes} bytes.`, limits.maxTextBytes, 'PLINTH_MAX_TEXT_BYTES');
  }
  if (type === 'list' && Array.isArray(v) && v.length > limits.maxListItems) {
    throw tooLarge(field, `Field "${field}" has more than ${limits.maxListItems} items.`, limits.maxListItems, 'PLINTH_MAX_LIST_ITEMS');
  }
  if (type === 'json' && typeof v === 'object' && v !== null) {
    if (jsonDepth(v, limits.maxJsonDepth) > limits.maxJsonDepth) {
      throw tooLarge(field, `Field "${field}" is nested deeper than ${limits.maxJsonDepth} levels.`, limits.maxJsonDepth, 'PLINTH_MAX_JSON_DEPTH');
    }
    if (Buffer.byteLength(JSON.stringify(v)) > limits.maxJsonBytes) {
      throw tooLarge(field, `Field "${field}" is larger than ${limits.maxJsonBytes} bytes of JSON.`, limits.maxJsonBytes, 'PLINTH_MAX_JSON_BYTES');
    }
  } else if (type === 'json' && typeof v === 'string' && Buffer.byteLength(v) > limits.maxJsonBytes) {
    throw tooLarge(field, `Field "${field}" is larger than ${limits.maxJsonBytes} bytes of JSON.`, limits.maxJsonBytes, 'PLINTH_MAX_JSON_BYTES');
  }
}

/** Throws 400 naming `data` when a record's user fields are over the record size limit. */
export function checkRecordSize(data: { [field: string]: JsonValue }, limits: RecordLimits): void {
  const json = JSON.stringify(data);
  if (json.length * 3 > limits.maxRecordBytes && Buffer.byteLength(json) > limits.maxRecordBytes) {
    throw tooLarge('data', `The record's fields hold more than ${limits.maxRecordBytes} bytes of JSON.`, limits.maxRecordBytes, 'PLINTH_MAX_RECORD_BYTES');
  }
}
