/**
 * The `file` and `files` field types (docs/files.md "Fields"): their options as a collection
 * definition states them, checked when the collection is saved, and the metadata a record's
 * field holds for each stored file.
 */
import type { FileMeta } from '@plinth/protocol';
import { InvalidRequestError } from '@plinth/shared';

export const DEFAULT_MAX_FILE_SIZE = 5 * 1024 * 1024;
/** No field may allow a larger file (2 GiB). */
export const MAX_FILE_SIZE_CAP = 2 * 1024 * 1024 * 1024;
export const MAX_ITEMS_CAP = 100;
export const DEFAULT_MAX_ITEMS = 10;
export const MAX_THUMB_SIDE = 2000;
export const MAX_THUMBS_PER_FIELD = 10;

export interface FileFieldOptions {
  type: 'file' | 'files';
  /** Largest file, in bytes. */
  max_size: number;
  /** Allowed types (`image/png`, `image/*`), checked against the bytes; any when empty. */
  mime_types: string[];
  /** Most files the field holds (1 for `file`). */
  max_items: number;
  /** Thumbnail sizes a download may ask for (`100x100`, `0x300`, `100x100f`). */
  thumbs: string[];
}

/** What a record's file field holds for each file. */
export type { FileMeta } from '@plinth/protocol';

export type ThumbMode = 'center' | 'top' | 'bottom' | 'fit';

export interface ThumbSpec {
  width: number;
  height: number;
  mode: ThumbMode;
}

const THUMB = /^(\d{1,4})x(\d{1,4})([tbf]?)$/;
const MIME = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/(\*|[a-z0-9][a-z0-9!#$&^_.+-]{0,63})$/;

/** `100x100` (crop centred), `100x100t` / `b` (crop from top / bottom), `100x100f` (fit inside), `0x300` / `300x0` (keep the aspect). Null when not a thumb spec. */
export function parseThumbSpec(spec: string): ThumbSpec | null {
  const m = THUMB.exec(spec);
  if (!m) return null;
  const width = Number(m[1]);
  const height = Number(m[2]);
  if ((width === 0 && height === 0) || width > MAX_THUMB_SIDE || height > MAX_THUMB_SIDE) return null;
  if ((width === 0 || height === 0) && m[3]) return null;
  const mode: ThumbMode = m[3] === 't' ? 'top' : m[3] === 'b' ? 'bottom' : m[3] === 'f' ? 'fit' : 'center';
  return { width, height, mode };
}

function bad(field: string, message: string): InvalidRequestError {
  return new InvalidRequestError(message, { field });
}

function integerIn(field: string, name: string, v: unknown, min: number, max: number, fallback: number): number {
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw bad(field, `${name} must be an integer from ${min} to ${max}.`);
  return v;
}

/** The options of a `file`/`files` field from a collection definition; 400 when invalid. */
export function parseFileField(field: string, raw: { [k: string]: unknown }): FileFieldOptions {
  const type = raw.type;
  if (type !== 'file' && type !== 'files') throw bad(field, 'Not a file field.');
  const max_size = integerIn(field, 'max_size', raw.max_size, 1, MAX_FILE_SIZE_CAP, DEFAULT_MAX_FILE_SIZE);
  const max_items = type === 'file' ? 1 : integerIn(field, 'max_items', raw.max_items, 1, MAX_ITEMS_CAP, DEFAULT_MAX_ITEMS);
  if (type === 'file' && raw.max_items !== undefined && raw.max_items !== 1) throw bad(field, 'A file field holds one file; use files for several.');
  const mime_types = raw.mime_types ?? [];
  if (!Array.isArray(mime_types) || mime_types.length > 50 || !mime_types.every((m) => typeof m === 'string' && MIME.test(m))) {
    throw bad(field, 'mime_types must be a list of at most 50 types such as image/png or image/*.');
  }
  const thumbs = raw.thumbs ?? [];
  if (!Array.isArray(thumbs) || thumbs.length > MAX_THUMBS_PER_FIELD || !thumbs.every((t) => typeof t === 'string' && parseThumbSpec(t))) {
    throw bad(field, `thumbs must be a list of at most ${MAX_THUMBS_PER_FIELD} sizes such as 100x100, 0x300 or 100x100f (sides up to ${MAX_THUMB_SIDE}).`);
  }
  return { type, max_size, mime_types: mime_types as string[], max_items, thumbs: thumbs as string[] };
}

/** Whether a stored value is a file's metadata (what a record's file field holds). */
export function isFileMeta(v: unknown): v is FileMeta {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const m = v as { [k: string]: unknown };
  return typeof m.name === 'string' && typeof m.size === 'number' && typeof m.type === 'string' && typeof m.sha256 === 'string';
}

/**
 * Metadata the server made (an upload) or read from the stored record: the only file values a
 * record write accepts. A client's JSON cannot produce one, so it cannot point a field at a
 * stored file it never uploaded.
 */
const TRUSTED = new WeakSet<object>();

export function trustFileMeta<T extends FileMeta>(meta: T): T {
  TRUSTED.add(meta);
  return meta;
}

export function isTrustedFileMeta(v: unknown): v is FileMeta {
  return isFileMeta(v) && TRUSTED.has(v);
}
