/**
 * Counts, hashes and limits bytes as they arrive (docs/files.md "Limits"). Every adapter reads
 * the body through this, so a body over the limit is refused at the same byte everywhere, and
 * reading stops there: nothing past `maxBytes` + one chunk is ever pulled from the source.
 */
import { createHash } from 'node:crypto';
import { PayloadTooLargeError } from '@plinth/shared';
import type { StoredObject } from './file-storage';

export class MeteredBody implements AsyncIterable<Buffer> {
  private readonly hash = createHash('sha256');
  private bytes = 0;
  private done = false;

  constructor(
    private readonly source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    private readonly maxBytes: number,
  ) {}

  async *[Symbol.asyncIterator](): AsyncGenerator<Buffer> {
    for await (const chunk of this.source) {
      const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      this.bytes += buf.length;
      if (this.bytes > this.maxBytes) {
        throw new PayloadTooLargeError(`The file is larger than its limit of ${this.maxBytes} bytes.`);
      }
      this.hash.update(buf);
      yield buf;
    }
    this.done = true;
  }

  /** The size and hash once the whole body has been read. */
  result(): StoredObject {
    if (!this.done) throw new Error('MeteredBody.result() before the body ended');
    return { size: this.bytes, sha256: this.hash.digest('hex') };
  }
}

/** Regroups a byte stream into chunks of exactly `size` bytes (the last one may be shorter). */
export async function* rechunk(source: AsyncIterable<Buffer>, size: number): AsyncGenerator<Buffer> {
  let parts: Buffer[] = [];
  let held = 0;
  for await (const chunk of source) {
    let rest = chunk;
    while (held + rest.length >= size) {
      const take = size - held;
      parts.push(rest.subarray(0, take));
      yield Buffer.concat(parts, size);
      rest = rest.subarray(take);
      parts = [];
      held = 0;
    }
    if (rest.length > 0) {
      parts.push(rest);
      held += rest.length;
    }
  }
  if (held > 0) yield Buffer.concat(parts, held);
}
