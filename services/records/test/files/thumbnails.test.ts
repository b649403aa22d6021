import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import sharp from 'sharp';
import { InvalidRequestError } from '@plinth/shared';
import { parseThumbSpec, type ThumbSpec } from '../../src/files/file-field';
import { DiskFileStorage } from '../../src/files/storage/disk-file-storage';
import { fileKey } from '../../src/files/storage/file-storage';
import { Thumbnailer } from '../../src/files/thumbnails';
import { readAll } from './file-storage.contract';

let root: string;
let storage: DiskFileStorage;
beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'plinth-thumbs-'));
  storage = await new DiskFileStorage(root).init();
});
afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

const spec = (s: string): ThumbSpec => parseThumbSpec(s) as ThumbSpec;

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A PNG of a few hundred bytes whose header declares `w`×`h` gray pixels (a decompression bomb). */
function pngBomb(w: number, h: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // grayscale
  const rows = zlib.deflateSync(Buffer.alloc((w + 1) * 4));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', rows), chunk('IEND', Buffer.alloc(0))]);
}

describe('Thumbnailer', () => {
  it('makes a thumbnail on first request, stores it beside the original, and reuses it', async () => {
    const png = await sharp({ create: { width: 400, height: 200, channels: 3, background: '#c33' } }).png().toBuffer();
    const src = fileKey('p1', 'c', 'pic_aaaaaaaaaa.png');
    await storage.put(src, [png], { maxBytes: 1 << 22 });
    const t = new Thumbnailer(storage);
    for (const [s, w, h] of [['100x100', 100, 100], ['0x50', 100, 50], ['100x100f', 100, 50]] as const) {
      const target = fileKey('p1', 'c', 'thumbs_pic_aaaaaaaaaa.png', s);
      await t.ensure(src, 'image/png', target, spec(s));
      const meta = await sharp(await readAll(await storage.get(target))).metadata();
      expect({ s, w: meta.width, h: meta.height, f: meta.format }).toEqual({ s, w, h, f: 'png' });
    }
    const target = fileKey('p1', 'c', 'thumbs_pic_aaaaaaaaaa.png', '100x100');
    const before = await storage.stat(target);
    await t.ensure(src, 'image/png', target, spec('100x100'));
    expect((await storage.stat(target))?.modifiedAt).toBe(before?.modifiedAt);
  });

  it('refuses a decompression bomb (15,000 × 15,000 pixels in a few KB) with 400 before decoding it, and stores nothing', async () => {
    const bomb = pngBomb(15_000, 15_000);
    expect(bomb.length).toBeLessThan(5000);
    const src = fileKey('p1', 'c', 'bomb_bbbbbbbbbb.png');
    await storage.put(src, [bomb], { maxBytes: 1 << 22 });
    const target = fileKey('p1', 'c', 'thumbs_bomb_bbbbbbbbbb.png', '100x100');
    const rssBefore = process.memoryUsage().rss;
    await expect(new Thumbnailer(storage).ensure(src, 'image/png', target, spec('100x100'))).rejects.toThrow(new InvalidRequestError('The image is larger than the thumbnail pixel limit of 40000000 pixels.'));
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(200 * 1024 * 1024);
    expect(await storage.stat(target)).toBeNull();
  });

  it('refuses bytes that are not an image it can decode with 400', async () => {
    const src = fileKey('p1', 'c', 'fake_cccccccccc.png');
    await storage.put(src, [Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(50, 1)])], { maxBytes: 1 << 22 });
    await expect(new Thumbnailer(storage).ensure(src, 'image/png', fileKey('p1', 'c', 'thumbs_fake_cccccccccc.png', '10x10'), spec('10x10'))).rejects.toThrow(InvalidRequestError);
    await expect(new Thumbnailer(storage).ensure(src, 'text/html', fileKey('p1', 'c', 'thumbs_fake_cccccccccc.png', '10x10'), spec('10x10'))).rejects.toThrow(InvalidRequestError);
  });
});
