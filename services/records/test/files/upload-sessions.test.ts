/**
 * Resumable upload sessions on the disk storage: a part cut off mid-way stores nothing and is
 * sent again, and the assembled file is byte for byte the one the client had.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PlinthError } from '@plinth/shared';
import { DiskFileStorage } from '../../src/files/storage/disk-file-storage';
import { fileKey } from '../../src/files/storage/file-storage';
import { sweepOrphans } from '../../src/files/orphan-sweeper';
import { UploadSessions, type UploadSession } from '../../src/files/upload-sessions';
import { readAll } from './file-storage.contract';

const PART = 64 * 1024;
const PNG_HEAD = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

let root: string;
let storage: DiskFileStorage;
let sessions: UploadSessions;
let clock = Date.parse('2026-11-26T06:00:00Z');

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'plinth-resumable-'));
  storage = await new DiskFileStorage(root).init();
  sessions = new UploadSessions(storage, { partSize: PART, now: () => clock });
});
afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

function open(file: Buffer, user: string | null = 'u1', maxSize = 10 * 1024 * 1024): Promise<UploadSession> {
  return sessions.create({ project: 'p1', collection: 'videos', recordId: 'rec_1', field: 'clip', user, originalName: 'Holiday Clip.png', size: file.length, maxSize });
}

function part(file: Buffer, n: number): Buffer {
  return file.subarray((n - 1) * PART, n * PART);
}

async function* once(b: Buffer): AsyncGenerator<Buffer> {
  yield b;
}

/** The first half of a part, then the connection drops. */
async function* cutOff(b: Buffer): AsyncGenerator<Buffer> {
  yield b.subarray(0, b.length >> 1);
  throw new Error('socket hang up');
}

const target = { keyOf: (name: string) => fileKey('p1', 'videos', name), mimeTypes: ['image/*'] };

describe('resumable upload sessions', () => {
  it('a part interrupted mid-way is not counted; sent again, the assembled file is the original', async () => {
    const file = Buffer.concat([PNG_HEAD, randomBytes(3 * PART + 1234 - PNG_HEAD.length)]);
    const s = await open(file);
    expect(s).toMatchObject({ parts: 4, part_size: PART, size: file.length });

    await sessions.putPart(s, 1, once(part(file, 1)));
    await expect(sessions.putPart(s, 2, cutOff(part(file, 2)))).rejects.toThrow('socket hang up');
    await sessions.putPart(s, 4, once(part(file, 4)));

    // The client asks where to resume: part 2 is missing, not half there.
    const again = await sessions.get('p1', s.id, 'u1');
    expect(await sessions.received(again)).toEqual([1, 4]);
    await expect(sessions.assemble(again, target)).rejects.toMatchObject({ status: 409, details: { missing: [2, 3] } });

    await sessions.putPart(again, 2, once(part(file, 2)));
    await sessions.putPart(again, 3, once(part(file, 3)));
    const { key, meta } = await sessions.assemble(again, target);
    expect(meta).toMatchObject({ size: file.length, type: 'image/png', original_name: 'Holiday Clip.png', sha256: createHash('sha256').update(file).digest('hex') });
    expect(meta.name).toMatch(/^holiday_clip_[a-z0-9]{10}\.png$/);
    expect((await readAll(await storage.get(key))).equals(file)).toBe(true);

    await sessions.finish(again);
    await expect(sessions.get('p1', s.id, 'u1')).rejects.toMatchObject({ status: 404 });
  });

  it('a part of the wrong size, or numbered outside the file, stores nothing', async () => {
    const file = Buffer.concat([PNG_HEAD, randomBytes(PART + 10)]);
    const s = await open(file);
    await expect(sessions.putPart(s, 1, once(part(file, 1).subarray(1)))).rejects.toMatchObject({ status: 400, details: { part: 1, expected: PART } });
    await expect(sessions.putPart(s, 2, once(Buffer.alloc(PART)))).rejects.toMatchObject({ status: 413 });
    await expect(sessions.putPart(s, 3, once(Buffer.alloc(1)))).rejects.toMatchObject({ status: 400 });
    expect(await sessions.received(s)).toEqual([]);
  });

  it("a session is only its opener's, a file over the field's max_size is refused up front, and the type is read from the bytes", async () => {
    const html = Buffer.from('<!doctype html><script>alert(1)</script>');
    const s = await open(html);
    await expect(sessions.get('p1', s.id, 'u2')).rejects.toMatchObject({ status: 404 });
    await expect(sessions.get('p1', s.id, null)).rejects.toMatchObject({ status: 404 });
    await expect(sessions.get('p1', '../../etc', 'u1')).rejects.toMatchObject({ status: 404 });
    await sessions.putPart(s, 1, once(html));
    await expect(sessions.assemble(s, target)).rejects.toMatchObject({ status: 400, details: { field: 'clip', type: 'text/html' } });
    await expect(open(Buffer.alloc(2000), 'u1', 1000)).rejects.toMatchObject({ status: 413 });
  });

  it("the orphan sweeper leaves an open session's parts alone, however old", async () => {
    const file = Buffer.concat([PNG_HEAD, randomBytes(PART)]);
    const s = await open(file);
    await sessions.putPart(s, 1, once(part(file, 1)));
    const swept = await sweepOrphans(storage, fileKey('p1'), async (k) => !k.includes('/_uploads/'), { graceMs: 0, now: Date.now() + 60_000 });
    expect(swept.removed).toBe(0);
    expect(await sessions.received(await sessions.get('p1', s.id, 'u1'))).toEqual([1]);
    await sessions.finish(s);
  });

  it('expired sessions are swept with their parts', async () => {
    const file = Buffer.concat([PNG_HEAD, randomBytes(100)]);
    const s = await open(file);
    await sessions.putPart(s, 1, once(file));
    clock += 25 * 60 * 60 * 1000;
    await expect(sessions.get('p1', s.id, 'u1')).rejects.toBeInstanceOf(PlinthError);
    expect(await sessions.sweepExpired('p1')).toBeGreaterThanOrEqual(1);
    const left: string[] = [];
    for await (const o of storage.list(fileKey('p1', '_uploads'))) left.push(o.key);
    expect(left).toEqual([]);
  });
});
