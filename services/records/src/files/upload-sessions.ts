/**
 * Resumable uploads (docs/files.md "Resumable uploads"): a large file is sent as numbered parts
 * of a session, each its own request, so a dropped connection costs one part, not the file.
 *
 *   create (collection, record, field, name, size) → the session, with its part size
 *   put part n (raw bytes)                         → stored as its own object; again to retry
 *   status                                         → which parts arrived (resume from there)
 *   assemble                                       → the parts, streamed in order into one file
 *
 * Everything lives in the file storage, so it works the same on disk, GridFS and S3 and needs no
 * table of its own: a session is `{project}/_uploads/{id}/session.json` and its parts are
 * `part_00001`…; `_uploads` can never be a collection's name (those start with a letter).
 * Attaching the assembled file to the record, under the update rule, is the caller's.
 */
import { randomBytes } from 'node:crypto';
import { InvalidRequestError, NotFoundError, PayloadTooLargeError, PlinthError, RateLimitedError } from '@plinth/shared';
import type { FileMeta } from './file-field';
import { SNIFF_BYTES, sniffType, typeAllowed } from './sniff';
import { storedName } from './stored-name';
import { fileKey, type FileKey, type FileStorage } from './storage/file-storage';

export const UPLOADS_SEGMENT = '_uploads';
export const DEFAULT_PART_SIZE = 5 * 1024 * 1024;
export const DEFAULT_SESSION_TTL_MS = 24 * 60 * 60 * 1000;
/** At most this many sessions open at once per project. */
export const MAX_OPEN_SESSIONS = 100;
/** At most this many parts per file (2 GiB in 5 MiB parts is 410). */
export const MAX_PARTS = 10_000;

const SESSION_ID = /^up_[a-z0-9]{24}$/;
const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

export interface UploadSession {
  id: string;
  project: string;
  collection: string;
  record_id: string;
  field: string;
  /** The user who opened it (null: the key alone); only they may send parts or complete it. */
  user: string | null;
  original_name: string;
  size: number;
  part_size: number;
  parts: number;
  created_at: string;
  expires_at: string;
}

export interface NewSession {
  project: string;
  collection: string;
  recordId: string;
  field: string;
  user: string | null;
  originalName: string;
  size: number;
  /** The field's `max_size`: a larger file is refused before any part is sent. */
  maxSize: number;
}

export interface UploadSessionOptions {
  partSize?: number;
  ttlMs?: number;
  now?: () => number;
}

function partName(n: number): string {
  return `part_${String(n).padStart(5, '0')}`;
}

async function readJson(storage: FileStorage, key: FileKey): Promise<unknown> {
  const stream = await storage.get(key);
  if (!stream) return null;
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

export class UploadSessions {
  readonly partSize: number;
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(
    private readonly storage: FileStorage,
    opts: UploadSessionOptions = {},
  ) {
    this.partSize = opts.partSize ?? DEFAULT_PART_SIZE;
    this.ttlMs = opts.ttlMs ?? DEFAULT_SESSION_TTL_MS;
    this.now = opts.now ?? Date.now;
  }

  private prefix(project: string, id?: string): FileKey {
    return id === undefined ? fileKey(project, UPLOADS_SEGMENT) : fileKey(project, UPLOADS_SEGMENT, id);
  }

  /** Ids of the sessions stored for the project (expired ones included, until swept). */
  private async sessionIds(project: string): Promise<Set<string>> {
    const ids = new Set<string>();
    for await (const o of this.storage.list(this.prefix(project))) {
      const id = o.key.split('/')[2];
      if (id) ids.add(id);
      if (ids.size > MAX_OPEN_SESSIONS * 2) break;
    }
    return ids;
  }

  async create(input: NewSession): Promise<UploadSession> {
    if (!Number.isSafeInteger(input.size) || input.size < 1) throw new InvalidRequestError('size must be a positive whole number of bytes.');
    if (input.size > input.maxSize) throw new PayloadTooLargeError(`${input.field}: the file is larger than ${input.maxSize} bytes.`);
    const parts = Math.ceil(input.size / this.partSize);
    if (parts > MAX_PARTS) throw new PayloadTooLargeError(`A resumable upload has at most ${MAX_PARTS} parts of ${this.partSize} bytes.`);
    await this.sweepExpired(input.project);
    if ((await this.sessionIds(input.project)).size >= MAX_OPEN_SESSIONS) {
      throw new RateLimitedError(60, `At most ${MAX_OPEN_SESSIONS} resumable uploads may be open at once in a project; complete or abort one.`);
    }
    const now = this.now();
    const session: UploadSession = {
      id: `up_${Array.from(randomBytes(24), (b) => ID_ALPHABET[b & 31]).join('')}`,
      project: input.project,
      collection: input.collection,
      record_id: input.recordId,
      field: input.field,
      user: input.user,
      original_name: input.originalName.slice(0, 255),
      size: input.size,
      part_size: this.partSize,
      parts,
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + this.ttlMs).toISOString(),
    };
    await this.storage.put(fileKey(input.project, UPLOADS_SEGMENT, session.id, 'session.json'), [Buffer.from(JSON.stringify(session))], { maxBytes: 8192 });
    return session;
  }

  /** The caller's open session; 404 when unknown, expired or another caller's (indistinguishable). */
  async get(project: string, id: string, user: string | null): Promise<UploadSession> {
    if (!SESSION_ID.test(id)) throw new NotFoundError('No such upload.');
    const s = (await readJson(this.storage, fileKey(project, UPLOADS_SEGMENT, id, 'session.json'))) as UploadSession | null;
    if (!s || s.user !== user || Date.parse(s.expires_at) <= this.now()) throw new NotFoundError('No such upload.');
    return s;
  }

  /** The parts stored so far, in order (each complete: a part is readable only once all of it is durable). */
  async received(session: UploadSession): Promise<number[]> {
    const got: number[] = [];
    for await (const o of this.storage.list(this.prefix(session.project, session.id))) {
      const m = /\/part_(\d{5})$/.exec(o.key);
      if (m && o.size === this.expectedSize(session, Number(m[1]))) got.push(Number(m[1]));
    }
    return got.sort((a, b) => a - b);
  }

  private expectedSize(s: UploadSession, n: number): number {
    return n < s.parts ? s.part_size : s.size - (s.parts - 1) * s.part_size;
  }

  /**
   * Stores part `n` (1-based) as it arrives. It must be exactly its size (the part size; the last
   * part the rest); a body cut off or too long stores nothing, and the part can be sent again.
   */
  async putPart(session: UploadSession, n: number, body: AsyncIterable<Uint8Array>): Promise<{ part: number; size: number }> {
    if (!Number.isInteger(n) || n < 1 || n > session.parts) {
      throw new InvalidRequestError(`Parts are numbered 1 to ${session.parts}.`, { part: String(n).slice(0, 12) });
    }
    const expected = this.expectedSize(session, n);
    const key = fileKey(session.project, UPLOADS_SEGMENT, session.id, partName(n));
    let obj;
    try {
      obj = await this.storage.put(key, body, { maxBytes: expected });
    } catch (err) {
      if (err instanceof PayloadTooLargeError) throw new PayloadTooLargeError(`Part ${n} must be ${expected} bytes.`);
      throw err;
    }
    if (obj.size !== expected) {
      await this.storage.delete(key);
      throw new InvalidRequestError(`Part ${n} must be ${expected} bytes; ${obj.size} arrived.`, { part: n, expected, received: obj.size });
    }
    return { part: n, size: obj.size };
  }

  /**
   * Streams the parts, in order, into one file at `keyOf(storedName)`: its type read from the
   * bytes and checked against `mimeTypes`, hashed as it is written. Every part must be there
   * (409 with the missing ones otherwise). The session stays until `finish`, so a record write
   * that fails can be retried with another `assemble`.
   */
  async assemble(session: UploadSession, target: { keyOf(stored: string): FileKey; mimeTypes: readonly string[] }): Promise<{ key: FileKey; meta: FileMeta }> {
    const got = new Set(await this.received(session));
    const missing: number[] = [];
    for (let n = 1; n <= session.parts && missing.length < 100; n++) if (!got.has(n)) missing.push(n);
    if (missing.length) throw new PlinthError('conflict', 'Some parts have not arrived yet; send them, then complete.', { missing });
    const first = await this.storage.get(fileKey(session.project, UPLOADS_SEGMENT, session.id, partName(1)), { start: 0, end: Math.min(session.size, SNIFF_BYTES) - 1 });
    const head: Buffer[] = [];
    for await (const c of first ?? []) head.push(c as Buffer);
    const type = sniffType(Buffer.concat(head));
    if (!typeAllowed(type, target.mimeTypes)) {
      throw new InvalidRequestError(`${session.field} does not accept ${type} files (the type is read from the file's bytes).`, { field: session.field, type });
    }
    const name = storedName(session.original_name, type);
    const key = target.keyOf(name);
    const storage = this.storage;
        async function* parts(): AsyncGenerator<Uint8Array> {
      for (let n = 1; n <= session.parts; n++) {
        const stream = await storage.get(fileKey(session.project, UPLOADS_SEGMENT, session.id, partName(n)));
        if (!stream) throw new PlinthError('conflict', `Part ${n} went away while the file was assembled.`, { missing: [n] });
        for await (const c of stream) yield c as Uint8Array;
      }
    }
    const obj = await this.storage.put(key, parts(), { maxBytes: session.size });
    const meta: FileMeta = { name, original_name: session.original_name, size: obj.size, type, sha256: obj.sha256, created_at: new Date(this.now()).toISOString() };
    return { key, meta };
  }

  /** Removes the session and its parts (after the file was attached, or to abort). */
  async finish(session: UploadSession): Promise<void> {
    await this.storage.deletePrefix(this.prefix(session.project, session.id));
  }

  /** Removes the project's sessions past their expiry; returns how many. */
  async sweepExpired(project: string): Promise<number> {
    let removed = 0;
    for (const id of await this.sessionIds(project)) {
      const s = (await readJson(this.storage, fileKey(project, UPLOADS_SEGMENT, id, 'session.json')).catch(() => null)) as UploadSession | null;
      if (!s || Date.parse(s.expires_at) <= this.now()) {
        if (!s) {
          // Parts without a session file: a session whose file is gone, or one being created right now.
          const stat = await this.storage.stat(fileKey(project, UPLOADS_SEGMENT, id, partName(1)));
          if (stat && this.now() - stat.modifiedAt < this.ttlMs) continue;
        }
        await this.storage.deletePrefix(this.prefix(project, id));
        removed++;
      }
    }
    return removed;
  }
}

/** Whether a key belongs to a resumable upload (the orphan sweeper leaves those to `sweepExpired`). */
export function isUploadKey(key: FileKey): boolean {
  return key.split('/')[1] === UPLOADS_SEGMENT;
}
