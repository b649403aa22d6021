/**
 * Reads a `multipart/form-data` record write (docs/files.md "Uploading"): one `data` part with
 * the record's JSON, and file parts named after the record's file fields. busboy parses it as a
 * stream: each file goes to storage as its bytes arrive (never buffered whole, never on a temp
 * disk of ours), sniffed from its first bytes and cut off at its field's `max_size`. On any
 * failure the files already stored by this request are deleted and reading stops: the caller
 * answers with `Connection: close` so the rest of the body is never read (closeAfterResponse in
 * @plinth/shared).
 */
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { InvalidRequestError, PayloadTooLargeError, PlinthError, UnsupportedMediaTypeError } from '@plinth/shared';
import type { FileFieldOptions, FileMeta } from './file-field';
import type { FileKey, FileStorage } from './storage/file-storage';
import { SNIFF_BYTES, sniffType, typeAllowed } from './sniff';
import { storedName } from './stored-name';

/** The `data` part (the record's JSON) may be at most this large. */
export const MAX_DATA_PART = 1024 * 1024;
/** At most this many file parts in one request. */
export const MAX_FILE_PARTS = 100;

export interface UploadTarget {
  /** The options of the file field `name`, or null when the collection has no such file field. */
  field(name: string): FileFieldOptions | null;
  /** Where a file with this stored name goes. */
  keyOf(storedName: string): FileKey;
}

export interface ParsedUpload {
  /** The record's fields from the `data` part ({} when absent). */
  data: { [field: string]: unknown };
  /** The files that arrived, by field, in the order sent. */
  files: { [field: string]: FileMeta[] };
  /** Every key written: delete them if the record write fails. */
  keys: FileKey[];
}

export function isMultipart(req: IncomingMessage): boolean {
  return /^multipart\/form-data\s*;/i.test(req.headers['content-type'] ?? '');
}

/** Reads the first `n` bytes (fewer at the end) and returns them with an iterator of the rest. */
export async function head(stream: Readable, n: number): Promise<{ first: Buffer; rest: AsyncIterable<Buffer> }> {
  const it = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const parts: Buffer[] = [];
  let got = 0;
  let ended = false;
  while (got < n) {
    const r = await it.next();
    if (r.done) {
      ended = true;
      break;
    }
    parts.push(r.value);
    got += r.value.length;
  }
  const all = Buffer.concat(parts);
  const first = all.subarray(0, Math.min(n, all.length));
  const over = all.subarray(first.length);
  async function* rest(): AsyncGenerator<Buffer> {
    if (over.length) yield over;
    if (ended) return;
    for (let r = await it.next(); !r.done; r = await it.next()) yield r.value;
  }
  return { first, rest: rest() };
}

export async function* concat(first: Buffer, rest: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  if (first.length) yield first;
  yield* rest;
}

export async function readMultipartUpload(req: IncomingMessage, storage: FileStorage, target: UploadTarget): Promise<ParsedUpload> {
  let bb: busboy.Busboy;
  try {
    bb = busboy({
      headers: req.headers,
      defParamCharset: 'utf8',
      limits: { fields: 1, fieldSize: MAX_DATA_PART, files: MAX_FILE_PARTS, parts: MAX_FILE_PARTS + 1, headerPairs: 20, fieldNameSize: 100 },
    });
  } catch {
    throw new UnsupportedMediaTypeError('Send files as multipart/form-data with a boundary.');
  }
  const result: ParsedUpload = { data: {}, files: {}, keys: [] };
  let failure: PlinthError | Error | null = null;
  let work: Promise<void> = Promise.resolve();
  /** File parts seen per field (stored or still arriving). */
  const counts = new Map<string, number>();

  const fail = (err: unknown): void => {
    if (!failure) failure = err instanceof Error ? err : new Error(String(err));
  };

  const done = new Promise<void>((resolve, reject) => {
    bb.on('field', (name, value, info) => {
      if (name !== 'data') return fail(new InvalidRequestError('The only non-file part is data (the record as JSON).', { part: name.slice(0, 100) }));
      if (info.valueTruncated) return fail(new PayloadTooLargeError('The data part is larger than 1 MiB.'));
      try {
        const parsed: unknown = JSON.parse(value);
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
        result.data = parsed as { [k: string]: unknown };
      } catch {
        fail(new InvalidRequestError('The data part must be a JSON object.'));
      }
    });
    bb.on('file', (name, stream, info) => {
      const options = target.field(name);
      if (failure || !options) {
        if (!failure) fail(new InvalidRequestError(`${name.slice(0, 100)} is not a file field of this collection.`, { field: name.slice(0, 100) }));
        stream.resume();
        return;
      }
      const list = (result.files[name] ??= []);
      counts.set(name, (counts.get(name) ?? 0) + 1);
      if ((counts.get(name) ?? 0) > options.max_items) {
        fail(new InvalidRequestError(`${name} holds at most ${options.max_items} file(s).`, { field: name }));
        stream.resume();
        return;
      }
      work = work.then(async () => {
        if (failure) return void stream.resume();
        try {
          const { first, rest } = await head(stream, SNIFF_BYTES);
          const type = sniffType(first);
          if (!typeAllowed(type, options.mime_types)) {
            throw new InvalidRequestError(`${name} does not accept ${type} files (the type is read from the file's bytes).`, { field: name, type });
          }
          const stored = storedName(info.filename ?? '', type);
          const key = target.keyOf(stored);
          result.keys.push(key);
          const obj = await storage.put(key, concat(first, rest), { maxBytes: options.max_size });
          list.push({ name: stored, original_name: (info.filename ?? '').slice(0, 255), size: obj.size, type, sha256: obj.sha256, created_at: new Date().toISOString() });
        } catch (err) {
          fail(err instanceof PayloadTooLargeError ? new PayloadTooLargeError(`${name}: the file is larger than ${options.max_size} bytes.`) : err);
          stream.resume();
        }
      });
      // Stop taking more of the body at once when this file failed.
      work.then(() => failure && stopReading());
    });
    bb.on('partsLimit', () => fail(new PayloadTooLargeError(`At most ${MAX_FILE_PARTS} files per request.`)));
    bb.on('filesLimit', () => fail(new PayloadTooLargeError(`At most ${MAX_FILE_PARTS} files per request.`)));
    bb.on('fieldsLimit', () => fail(new InvalidRequestError('Send one data part.')));
    bb.on('error', (err) => reject(new InvalidRequestError(`Malformed multipart body: ${(err as Error).message}`)));
    bb.on('close', () => resolve());
    req.on('aborted', () => reject(new InvalidRequestError('The upload was interrupted.')));
  });

  let stop: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  function stopReading(): void {
    req.unpipe(bb);
    req.pause();
    stop();
  }

  req.pipe(bb);
  try {
    await Promise.race([done, stopped]);
    await work;
  } catch (err) {
    fail(err);
  }
  if (failure) {
    stopReading();
    await Promise.all(result.keys.map((k) => storage.delete(k).catch(() => false)));
    throw failure;
  }
  return result;
}
