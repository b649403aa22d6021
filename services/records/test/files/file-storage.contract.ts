/**
 * The FileStorage contract (docs/files.md "Storage"): every adapter runs exactly these tests
 * and must give the same answers — round trips, ranges, limits enforced while bytes arrive,
 * failed writes leaving nothing, replace, delete, delete by prefix and listing.
 */
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { PayloadTooLargeError } from '@plinth/shared';
import { fileKey, type FileStorage } from '../../src/files/storage/file-storage';

/** Deterministic bytes: byte i is (i * 31 + 7) mod 251. */
export function pattern(size: number, offset = 0): Buffer {
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i++) b[i] = ((offset + i) * 31 + 7) % 251;
  return b;
}

/** A body of `total` bytes in `chunk`-sized pieces; `pulled.bytes` counts what was read from it. */
export async function* generated(total: number, pulled: { bytes: number } = { bytes: 0 }, chunk = 64 * 1024): AsyncGenerator<Buffer> {
  for (let at = 0; at < total; at += chunk) {
    const piece = pattern(Math.min(chunk, total - at), at);
    pulled.bytes += piece.length;
    yield piece;
  }
}

async function* failing(after: number): AsyncGenerator<Buffer> {
  yield pattern(after);
  throw new Error('client went away');
}

export async function readAll(stream: Readable | null): Promise<Buffer> {
  if (!stream) throw new Error('expected an object, got null');
  const parts: Buffer[] = [];
  for await (const c of stream) parts.push(Buffer.from(c as Uint8Array));
  return Buffer.concat(parts);
}

async function keys(storage: FileStorage, prefix: string): Promise<string[]> {
  const out: string[] = [];
  for await (const o of storage.list(fileKey(...prefix.split('/')))) out.push(o.key);
  return out.sort();
}

const MiB = 1024 * 1024;
const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

export function describeFileStorageContract(name: string, make: () => Promise<FileStorage>, opts: { largeBytes?: number } = {}): void {
  const LARGE = opts.largeBytes ?? 11 * MiB + 123;

  describe(`FileStorage contract: ${name}`, () => {
    let storage: FileStorage;
    beforeEach(async () => {
      storage = await make();
    });
    afterEach(async () => {
      await storage.close();
    });

    it('stores a body and reads the same bytes back, with its size and SHA-256', async () => {
      const body = pattern(1000);
      const key = fileKey('p1', 'posts', 'rec_1', 'a.bin');
      expect(await storage.put(key, [body], { maxBytes: MiB })).toEqual({ size: 1000, sha256: sha(body) });
      expect(await readAll(await storage.get(key))).toEqual(body);
      expect(await storage.stat(key)).toMatchObject({ key, size: 1000 });
    });

    it('stores an empty body', async () => {
      const key = fileKey('p1', 'posts', 'rec_1', 'empty.txt');
      expect(await storage.put(key, [], { maxBytes: 10 })).toEqual({ size: 0, sha256: sha(Buffer.alloc(0)) });
      expect((await readAll(await storage.get(key))).length).toBe(0);
    });

    it('streams a large body of many chunks/parts and reads byte ranges anywhere in it', async () => {
      const key = fileKey('p1', 'posts', 'rec_1', 'large.bin');
      const whole = pattern(LARGE);
      expect(await storage.put(key, generated(LARGE), { maxBytes: 20 * MiB })).toEqual({ size: LARGE, sha256: sha(whole) });
      expect(sha(await readAll(await storage.get(key)))).toBe(sha(whole));
      const ranges = [[0, 0], [10, 99], [255 * 1024 - 5, 255 * 1024 + 5], [5 * MiB - 1, 5 * MiB + 70_000], [LARGE - 70_003, LARGE - 2], [LARGE - 1, LARGE - 1]];
      for (const [start, end] of ranges.filter(([, e]) => e < LARGE)) {
        const got = await readAll(await storage.get(key, { start, end }));
        expect(got.length).toBe(end - start + 1);
        expect(sha(got)).toBe(sha(whole.subarray(start, end + 1)));
      }
    });

    it('answers null for an object that does not exist', async () => {
      const key = fileKey('p1', 'posts', 'rec_1', 'missing.bin');
      expect(await storage.stat(key)).toBeNull();
      expect(await storage.get(key)).toBeNull();
      expect(await storage.delete(key)).toBe(false);
    });

    it('refuses a body over its limit while it arrives: stops reading near the limit and stores nothing', async () => {
      const key = fileKey('p1', 'posts', 'rec_1', 'big.bin');
      const pulled = { bytes: 0 };
      await expect(storage.put(key, generated(1024 * MiB, pulled), { maxBytes: 5 * MiB })).rejects.toThrow(PayloadTooLargeError);
      expect(pulled.bytes).toBeLessThanOrEqual(5 * MiB + 64 * 1024);
      expect(await storage.stat(key)).toBeNull();
      expect(await keys(storage, 'p1')).toEqual([]);
    });

    it('a body that fails mid-way leaves nothing, and an earlier object under the key stays as it was', async () => {
      const key = fileKey('p1', 'posts', 'rec_1', 'a.bin');
      await storage.put(key, [pattern(10)], { maxBytes: MiB });
      await expect(storage.put(key, failing(300_000), { maxBytes: 20 * MiB })).rejects.toThrow('client went away');
      await expect(storage.put(fileKey('p1', 'posts', 'rec_1', 'b.bin'), failing(6 * MiB), { maxBytes: 20 * MiB })).rejects.toThrow('client went away');
      expect(await readAll(await storage.get(key))).toEqual(pattern(10));
      expect(await keys(storage, 'p1')).toEqual(['p1/posts/rec_1/a.bin']);
      expect(await storage.sweepPartial(0)).toBe(0);
    });

    it('a second put under a key replaces the first', async () => {
      const key = fileKey('p1', 'posts', 'rec_1', 'a.bin');
      await storage.put(key, [pattern(10)], { maxBytes: MiB });
      await storage.put(key, [pattern(20, 5)], { maxBytes: MiB });
      expect(await readAll(await storage.get(key))).toEqual(pattern(20, 5));
      expect(await keys(storage, 'p1')).toEqual(['p1/posts/rec_1/a.bin']);
    });

    it('deletes one object, idempotently', async () => {
      const key = fileKey('p1', 'posts', 'rec_1', 'a.bin');
      await storage.put(key, [pattern(10)], { maxBytes: MiB });
      expect(await storage.delete(key)).toBe(true);
      expect(await storage.delete(key)).toBe(false);
      expect(await storage.get(key)).toBeNull();
    });

    it('deletes everything under a prefix and nothing under a longer sibling prefix', async () => {
      for (const k of ['p1/posts/rec_1/a.bin', 'p1/posts/rec_2/b.bin', 'p1/notes/rec_3/c.bin', 'p10/posts/rec_1/a.bin']) {
        await storage.put(fileKey(...k.split('/')), [pattern(5)], { maxBytes: MiB });
      }
      expect(await keys(storage, 'p1/posts')).toEqual(['p1/posts/rec_1/a.bin', 'p1/posts/rec_2/b.bin']);
      expect(await storage.deletePrefix(fileKey('p1'))).toBe(3);
      expect(await keys(storage, 'p1')).toEqual([]);
      expect(await keys(storage, 'p10')).toEqual(['p10/posts/rec_1/a.bin']);
    });
  });
}
