/**
 * The file storage port (docs/files.md "Storage"): where the bytes of `file` fields live. Three
 * adapters implement it — local disk (standalone), GridFS on the cluster's MongoDB, and any
 * S3-compatible service — and one contract suite runs against each.
 *
 * Drivers do primitives; the shared code around them (metered-body.ts) counts, hashes and
 * limits the bytes as they arrive, so every adapter stops reading at the same byte.
 */
import type { Readable } from 'node:stream';
import { InvalidRequestError } from '@plinth/shared';

/**
 * A storage key: `/`-separated segments of `[A-Za-z0-9._-]`, none empty, none `.` or `..`, none
 * starting with a dot (those are the adapters' own: temporary and partial writes). Built only
 * through `fileKey` so that no client-supplied path ever reaches an adapter unchecked.
 */
export type FileKey = string & { readonly __fileKey: true };

const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;
export const MAX_KEY_LENGTH = 1024;

/** Whether every segment is a safe key segment. */
export function isKeySegment(segment: string): boolean {
  return SEGMENT.test(segment) && segment !== '.' && segment !== '..';
}

/** Joins segments into a key; a bad segment is a client error (400), never a path on disk. */
export function fileKey(...segments: string[]): FileKey {
  for (const s of segments) {
    if (!isKeySegment(s)) throw new InvalidRequestError('Invalid file name.', { segment: s.slice(0, 64) });
  }
  const key = segments.join('/');
  if (key.length > MAX_KEY_LENGTH) throw new InvalidRequestError('File path too long.');
  return key as FileKey;
}

/** What a completed write stored. */
export interface StoredObject {
  size: number;
  /** Lower-case hex SHA-256 of the bytes. */
  sha256: string;
}

/** An inclusive byte range, as HTTP `Range` names one. */
export interface ByteRange {
  start: number;
  end: number;
}

export interface ObjectInfo {
  key: FileKey;
  size: number;
  /** When the write completed (ms since epoch). */
  modifiedAt: number;
}

export interface PutOptions {
  /** The write fails with PayloadTooLargeError once more than this many bytes arrived; reading stops there. */
  maxBytes: number;
}

export interface FileStorage {
  /**
   * Streams `body` under `key`. Resolves only once every byte is durable (fsync'd, majority
   * written or acknowledged by S3); only then is the object readable. If the body fails, runs
   * past `maxBytes` (PayloadTooLargeError) or the write fails, nothing is readable under the
   * key afterwards (an earlier object under the same key stays as it was) and the partial
   * write is removed — or, after a crash, left where `sweepPartial` finds it.
   * A second put under the same key replaces the first once it completes.
   */
  put(key: FileKey, body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, opts: PutOptions): Promise<StoredObject>;

  /** Size and completion time of the object, or null when absent. */
  stat(key: FileKey): Promise<ObjectInfo | null>;

  /**
   * The object's bytes (only `range` when given; it must lie inside the object), or null when
   * absent. The stream reads lazily: a consumer that stops reading holds no more than a chunk.
   */
  get(key: FileKey, range?: ByteRange): Promise<Readable | null>;

  /** Removes the object; true when it existed. Idempotent. */
  delete(key: FileKey): Promise<boolean>;

  /** Removes every object whose key starts with `prefix` + `/`; returns how many. */
  deletePrefix(prefix: FileKey): Promise<number>;

  /** Every completed object under `prefix` + `/`, in no particular order. */
  list(prefix: FileKey): AsyncIterable<ObjectInfo>;

  /**
   * Removes partial writes (a crash mid-upload) that started more than `olderThanMs` ago;
   * returns how many. Writes in progress younger than that are left alone.
   */
  sweepPartial(olderThanMs: number): Promise<number>;

  close(): Promise<void>;
}
