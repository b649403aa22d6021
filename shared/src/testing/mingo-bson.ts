/**
 * How the mingo stand-in (mingo-db.ts) stores and compares documents like a MongoDB server:
 * through the driver's BSON serializer, within the server's depth and size limits, with strings
 * in UTF-8 byte order. Test-only.
 */
import { BSON, MongoServerError, type Document } from 'mongodb';

type Doc = Document & { _id?: unknown };

/** The server's limits. */
const MAX_BSON_SIZE = 16 * 1024 * 1024;
const MAX_DEPTH = 100;

let nextObjectId = 1;

function depthOf(v: unknown, level = 0): number {
  if (v === null || typeof v !== 'object' || v instanceof Date) return level;
  let max = level + 1;
  for (const x of Object.values(v as object)) {
    max = Math.max(max, depthOf(x, level + 1));
    if (max > MAX_DEPTH + 1) break;
  }
  return max;
}

/**
 * The document as the server would store it: serialized with the driver's BSON serializer
 * (which throws BSONError on a NUL in a key or an unknown `_bsontype`) and read back.
 */
export function toStored(doc: Doc): Doc {
  if (depthOf(doc) > MAX_DEPTH + 1) {
    throw new MongoServerError({ message: `BSONObj exceeds maximum nested object depth: ${MAX_DEPTH}`, code: 15, codeName: 'Overflow' });
  }
  const bytes = BSON.serialize(doc);
  if (bytes.length > MAX_BSON_SIZE) {
    throw new MongoServerError({ message: `BSONObj size: ${bytes.length} is invalid. Size must be between 0 and 16793600(16MB)`, code: 10334, codeName: 'BSONObjectTooLarge' });
  }
  return BSON.deserialize(bytes);
}

/** A copy for the caller: what the driver would decode from the server's reply. */
export function clone<T extends Doc>(v: T): T {
  return BSON.deserialize(BSON.serialize(v)) as T;
}

export function withId(doc: Doc): Doc {
  const { _id, ...rest } = doc;
  return { _id: _id ?? `oid_${nextObjectId++}`, ...rest };
}

export function sameBytes(a: Doc, b: Doc): boolean {
  return Buffer.from(BSON.serialize(a)).equals(Buffer.from(BSON.serialize(b)));
}

export function getPath(doc: Doc, path: string): unknown {
  let cur: unknown = doc;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as { [k: string]: unknown })[part];
  }
  return cur;
}

/**
 * Maps a string to one whose UTF-16 code units order like the original's UTF-8 bytes (that is,
 * by code point): U+E000–U+FFFF move below the surrogates, surrogate pairs move above them.
 * Injective and order-preserving, so equality and ranges give the server's answers. Regular
 * expressions see the original strings.
 */
function utf8Key(s: string): string {
  if (!/[\uD800-\uFFFF]/.test(s)) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const u = s.charCodeAt(i);
    if (u >= 0xe000) out += String.fromCharCode(u - 0x800);
    else if (u >= 0xd800 && u <= 0xdbff) out += String.fromCharCode(u + 0x2000);
    else out += s[i];
  }
  return out;
}

export function utf8Ordered(v: unknown): unknown {
  if (typeof v === 'string') return utf8Key(v);
  if (Array.isArray(v)) return v.map(utf8Ordered);
  if (v === null || typeof v !== 'object' || v instanceof Date || v instanceof RegExp || !isPlain(v)) return v;
  const out: { [k: string]: unknown } = {};
  for (const [k, x] of Object.entries(v)) out[k] = k === '$regex' || k === '$options' ? x : utf8Ordered(x);
  return out;
}

function isPlain(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

