/**
 * FileStorage on any S3-compatible service (`@aws-sdk/client-s3`). A body of at most one part
 * (5 MiB, S3's minimum part size) is one PutObject; a larger one is a multipart upload whose
 * parts are sent one at a time as they arrive — at most one part is held in memory — and which
 * is aborted if the body fails or runs past its limit. An object exists only once S3 has
 * acknowledged the PutObject or CompleteMultipartUpload, which S3 does once the bytes are
 * durable. A crash mid-upload leaves an incomplete multipart upload: `sweepPartial` aborts
 * those (ListMultipartUploads); a bucket lifecycle rule `AbortIncompleteMultipartUpload` is the
 * backstop on services that do not list them (docs/files.md "Storage").
 */
import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import type { ByteRange, FileKey, FileStorage, ObjectInfo, PutOptions, StoredObject } from './file-storage';
import { MeteredBody, rechunk } from './metered-body';

export const S3_PART_SIZE = 5 * 1024 * 1024;

export interface S3FileStorageOptions {
  bucket: string;
  /** Prepended to every key (`plinth/` → `plinth/<key>`); empty by default. */
  keyPrefix?: string;
  client: S3ClientConfig;
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } } | null;
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
}

/** Bytes `range.start`..`range.end` of a stream of the object's bytes from `from` on. */
async function* sliceBytes(body: AsyncIterable<Uint8Array>, range: ByteRange, from: number): AsyncGenerator<Buffer> {
  let at = from;
  for await (const chunk of body) {
    const buf = Buffer.from(chunk);
    const from = Math.max(0, range.start - at);
    const to = Math.min(buf.length, range.end - at + 1);
    at += buf.length;
    if (to > from) yield buf.subarray(from, to);
    if (at > range.end) break;
  }
}

export class S3FileStorage implements FileStorage {
  private readonly s3: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;

  constructor(opts: S3FileStorageOptions) {
    this.s3 = new S3Client(opts.client);
    this.bucket = opts.bucket;
    this.prefix = opts.keyPrefix ?? '';
  }

  private k(key: string): string {
    return this.prefix + key;
  }

  async put(key: FileKey, body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, opts: PutOptions): Promise<StoredObject> {
    const metered = new MeteredBody(body, opts.maxBytes);
    const parts = rechunk(metered[Symbol.asyncIterator](), S3_PART_SIZE)[Symbol.asyncIterator]();
    const first = await parts.next();
    const firstBuf = first.done ? Buffer.alloc(0) : first.value;
    const second = first.done ? first : await parts.next();
    if (second.done) {
      await this.s3.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.k(key), Body: firstBuf, ContentLength: firstBuf.length }));
      return metered.result();
    }
    const { UploadId } = await this.s3.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: this.k(key) }));
    const done: Array<{ ETag?: string; PartNumber: number }> = [];
    try {
      const send = async (buf: Buffer): Promise<void> => {
        const PartNumber = done.length + 1;
        const r = await this.s3.send(new UploadPartCommand({ Bucket: this.bucket, Key: this.k(key), UploadId, PartNumber, Body: buf, ContentLength: buf.length }));
        done.push({ ETag: r.ETag, PartNumber });
      };
      await send(firstBuf);
      await send(second.value);
      for (let next = await parts.next(); !next.done; next = await parts.next()) await send(next.value);
      await this.s3.send(new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: this.k(key), UploadId, MultipartUpload: { Parts: done } }));
      return metered.result();
    } catch (err) {
      await this.s3.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: this.k(key), UploadId })).catch(() => undefined);
      throw err;
    }
  }

  async stat(key: FileKey): Promise<ObjectInfo | null> {
    try {
      const h = await this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.k(key) }));
      return { key, size: h.ContentLength ?? 0, modifiedAt: h.LastModified?.getTime() ?? 0 };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async get(key: FileKey, range?: ByteRange): Promise<Readable | null> {
    try {
      const r = await this.s3.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: this.k(key), Range: range ? `bytes=${range.start}-${range.end}` : undefined }),
      );
      const body = r.Body as Readable;
      if (!range) return body;
      // A service may send more than asked (s3rver answers `bytes=0-0` with the whole object):
      // trim to the range from where its Content-Range says the bytes start.
      const sent = /^bytes (\d+)-(\d+)\//.exec(r.ContentRange ?? '');
      const from = sent ? Number(sent[1]) : 0;
      if (sent && from === range.start && Number(sent[2]) === range.end) return body;
      return Readable.from(sliceBytes(body, range, from));
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async delete(key: FileKey): Promise<boolean> {
    const existed = (await this.stat(key)) !== null;
    await this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.k(key) }));
    return existed;
  }

  async deletePrefix(prefix: FileKey): Promise<number> {
    let n = 0;
    let batch: string[] = [];
    const flush = async (): Promise<void> => {
      if (batch.length === 0) return;
      await this.s3.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }));
      n += batch.length;
      batch = [];
    };
    for await (const o of this.list(prefix)) {
      batch.push(this.k(o.key));
      if (batch.length === 1000) await flush();
    }
    await flush();
    return n;
  }

  async *list(prefix: FileKey): AsyncGenerator<ObjectInfo> {
    let token: string | undefined;
    do {
      const page = await this.s3.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.k(`${prefix}/`), ContinuationToken: token, MaxKeys: 1000 }),
      );
      for (const o of page.Contents ?? []) {
        if (!o.Key) continue;
        yield { key: o.Key.slice(this.prefix.length) as FileKey, size: o.Size ?? 0, modifiedAt: o.LastModified?.getTime() ?? 0 };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  async sweepPartial(olderThanMs: number): Promise<number> {
    let n = 0;
    try {
      const r = await this.s3.send(new ListMultipartUploadsCommand({ Bucket: this.bucket, Prefix: this.prefix || undefined }));
      for (const u of r.Uploads ?? []) {
        if (!u.Key || !u.UploadId || Date.now() - (u.Initiated?.getTime() ?? 0) < olderThanMs) continue;
        await this.s3.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: u.Key, UploadId: u.UploadId }));
        n++;
      }
    } catch (err) {
      // A service without ListMultipartUploads relies on the bucket's lifecycle rule instead.
      if ((err as { name?: string }).name !== 'NotImplemented') throw err;
    }
    return n;
  }

  async close(): Promise<void> {
    this.s3.destroy();
  }
}
