/**
 * FileStorage on MongoDB in the GridFS layout (`<bucket>.files`, `<bucket>.chunks` of 255 KiB),
 * so `mongofiles` and the driver's GridFSBucket can read what it writes. It is written with
 * plain collection operations rather than GridFSBucket so that a write waits for each chunk's
 * majority acknowledgement before reading more of the body (backpressure, bounded memory) and
 * so that a crash mid-write is found again: a write first records itself in
 * `<bucket>.partial`, then writes its chunks, then the files document (the commit: before it,
 * nothing is readable), then removes its partial marker. Ids are ObjectId hex strings (GridFS
 * allows any `_id`). `sweepPartial` removes the chunks of
 * markers left by a crash. docs/files.md "Storage".
 */
import { Readable } from 'node:stream';
import { Binary, ObjectId, type Collection, type Db, type Document } from 'mongodb';
import type { ByteRange, FileKey, FileStorage, ObjectInfo, PutOptions, StoredObject } from './file-storage';
import { MeteredBody, rechunk } from './metered-body';

export const GRIDFS_CHUNK_SIZE = 255 * 1024;
/** Chunks fetched per read round trip. */
const CHUNKS_PER_READ = 4;

interface FilesDoc extends Document {
  _id: string;
  length: number;
  chunkSize: number;
  uploadDate: Date;
  filename: string;
}
interface ChunkDoc extends Document {
  files_id: string;
  n: number;
  data: Binary;
}
interface PartialDoc extends Document {
  _id: string;
  key: string;
  started_at: Date;
}

function bytesOf(data: unknown): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (data instanceof Binary) return Buffer.from(data.buffer.buffer, data.buffer.byteOffset, data.position);
  throw new Error('gridfs: a chunk without binary data');
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export class GridFsFileStorage implements FileStorage {
  private readonly files: Collection<FilesDoc>;
  private readonly chunks: Collection<ChunkDoc>;
  private readonly partial: Collection<PartialDoc>;

  constructor(
    db: Db,
    bucket = 'plinth_files',
    /** Run by close(): the owner of the connection closes it (tests drop their database). */
    private readonly onClose?: () => Promise<void>,
  ) {
    this.files = db.collection<FilesDoc>(`${bucket}.files`);
    this.chunks = db.collection<ChunkDoc>(`${bucket}.chunks`);
    this.partial = db.collection<PartialDoc>(`${bucket}.partial`);
  }

  async init(): Promise<this> {
    await this.files.createIndex({ filename: 1, uploadDate: 1 });
    await this.chunks.createIndex({ files_id: 1, n: 1 }, { unique: true });
    await this.partial.createIndex({ started_at: 1 });
    return this;
  }

  async put(key: FileKey, body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, opts: PutOptions): Promise<StoredObject> {
    const id = new ObjectId().toHexString();
    await this.partial.insertOne({ _id: id, key, started_at: new Date() });
    const metered = new MeteredBody(body, opts.maxBytes);
    try {
      let n = 0;
      for await (const chunk of rechunk(metered[Symbol.asyncIterator](), GRIDFS_CHUNK_SIZE)) {
        await this.chunks.insertOne({ files_id: id, n: n++, data: new Binary(chunk) });
      }
      const result = metered.result();
      const uploadDate = new Date();
      await this.files.insertOne({ _id: id, length: result.size, chunkSize: GRIDFS_CHUNK_SIZE, uploadDate, filename: key, metadata: { sha256: result.sha256 } });
      await this.partial.deleteOne({ _id: id });
      await this.dropOlder(key, id);
      return result;
    } catch (err) {
      await this.chunks.deleteMany({ files_id: id }).catch(() => undefined);
      await this.partial.deleteOne({ _id: id }).catch(() => undefined);
      throw err;
    }
  }

  /** Removes the versions of `key` that `keep` replaced. */
  private async dropOlder(key: string, keep: string): Promise<void> {
    const older = await this.files.find({ filename: key, _id: { $ne: keep } }, { projection: { _id: 1 } }).toArray();
    for (const o of older) await this.removeFile(o._id);
  }

  private async removeFile(id: string): Promise<void> {
    // The files document first: from then on the object is gone; the chunks follow.
    await this.files.deleteOne({ _id: id });
    await this.chunks.deleteMany({ files_id: id });
  }

  private async current(key: FileKey): Promise<FilesDoc | null> {
    return this.files.findOne({ filename: key }, { sort: { uploadDate: -1, _id: -1 } });
  }

  async stat(key: FileKey): Promise<ObjectInfo | null> {
    const f = await this.current(key);
    return f ? { key, size: f.length, modifiedAt: f.uploadDate.getTime() } : null;
  }

  async get(key: FileKey, range?: ByteRange): Promise<Readable | null> {
    const f = await this.current(key);
    if (!f) return null;
    const start = range?.start ?? 0;
    const end = range?.end ?? f.length - 1;
    const chunks = this.chunks;
    async function* read(): AsyncGenerator<Buffer> {
      if (end < start) return;
      const last = Math.floor(end / f!.chunkSize);
      for (let n = Math.floor(start / f!.chunkSize); n <= last; n += CHUNKS_PER_READ) {
        const page = await chunks.find({ files_id: f!._id, n: { $gte: n, $lt: Math.min(n + CHUNKS_PER_READ, last + 1) } }, { sort: { n: 1 } }).toArray();
        for (const c of page) {
          const at = (c.n as number) * f!.chunkSize;
          const buf = bytesOf(c.data);
          yield buf.subarray(Math.max(0, start - at), Math.min(buf.length, end - at + 1));
        }
      }
    }
    return Readable.from(read(), { objectMode: false });
  }

  async delete(key: FileKey): Promise<boolean> {
    const all = await this.files.find({ filename: key }, { projection: { _id: 1 } }).toArray();
    for (const f of all) await this.removeFile(f._id);
    return all.length > 0;
  }

  async deletePrefix(prefix: FileKey): Promise<number> {
    const all = await this.files.find({ filename: { $regex: `^${escapeRegex(prefix)}/` } }, { projection: { _id: 1 } }).toArray();
    for (const f of all) await this.removeFile(f._id);
    return all.length;
  }

  async *list(prefix: FileKey): AsyncGenerator<ObjectInfo> {
    const cursor = this.files.find({ filename: { $regex: `^${escapeRegex(prefix)}/` } }, { projection: { filename: 1, length: 1, uploadDate: 1 } });
    for await (const f of cursor) yield { key: f.filename as FileKey, size: f.length, modifiedAt: f.uploadDate.getTime() };
  }

  async sweepPartial(olderThanMs: number): Promise<number> {
    const stale = await this.partial.find({ started_at: { $lte: new Date(Date.now() - olderThanMs) } }).limit(1000).toArray();
    for (const p of stale) {
      // A marker whose files document exists was committed: only the marker is left over.
      if (!(await this.files.findOne({ _id: p._id }))) await this.chunks.deleteMany({ files_id: p._id });
      await this.partial.deleteOne({ _id: p._id });
    }
    return stale.length;
  }

  async close(): Promise<void> {
    await this.onClose?.();
  }
}
