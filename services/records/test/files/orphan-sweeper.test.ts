import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { originalOf, sweepOrphans } from '../../src/files/orphan-sweeper';
import { fileFieldNames, filesOf, releasedFiles } from '../../src/files/record-files';
import { DiskFileStorage } from '../../src/files/storage/disk-file-storage';
import { fileKey, type FileKey } from '../../src/files/storage/file-storage';

const meta = (name: string) => ({ name, original_name: name, size: 1, type: 'text/plain', sha256: 'ab', created_at: '' });

describe('record files', () => {
  const fields = fileFieldNames({ title: { type: 'text' }, cover: { type: 'file' }, docs: { type: 'files' } });
  it('lists the files a record holds', () => {
    expect(fields).toEqual(['cover', 'docs']);
    expect(filesOf(fields, { title: 'x', cover: meta('a_1'), docs: [meta('b_1'), meta('c_1')] }).map((m) => m.name)).toEqual(['a_1', 'b_1', 'c_1']);
    expect(filesOf(fields, { cover: null, docs: 'not files' })).toEqual([]);
  });
  it('names the files an update or delete let go of', () => {
    const before = { cover: meta('a_1'), docs: [meta('b_1'), meta('c_1')] };
    expect(releasedFiles(fields, before, { cover: meta('a_1'), docs: [meta('c_1')] })).toEqual(['b_1']);
    expect(releasedFiles(fields, before, { cover: null, docs: [] })).toEqual(['a_1', 'b_1', 'c_1']);
    expect(releasedFiles(fields, before, null)).toEqual(['a_1', 'b_1', 'c_1']);
  });
});

describe('sweepOrphans', () => {
  let root: string;
  afterEach(async () => {
    await fs.rm(root, { recursive: true, force: true });
  });

  it('removes files and their thumbnails that no record references once past the grace period, and nothing else', async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'plinth-sweep-'));
    const storage = await new DiskFileStorage(root).init();
    const keys = ['p1/posts/kept_aaaaaaaaaa.png', 'p1/posts/orphan_bbbbbbbbbb.png', 'p1/posts/thumbs_orphan_bbbbbbbbbb.png/100x100', 'p1/posts/thumbs_kept_aaaaaaaaaa.png/100x100'];
    for (const k of keys) await storage.put(fileKey(...k.split('/')), [Buffer.from('x')], { maxBytes: 10 });
    const referenced = new Set<string>(['p1/posts/kept_aaaaaaaaaa.png']);
    const asked: string[] = [];
    const isReferenced = async (k: FileKey): Promise<boolean> => {
      asked.push(k);
      return referenced.has(k);
    };
    // Within the grace period: the upload's record may still be committing.
    expect(await sweepOrphans(storage, fileKey('p1'), isReferenced, { graceMs: 60_000 })).toEqual({ removed: 0, partial: 0 });
    expect(await sweepOrphans(storage, fileKey('p1'), isReferenced, { graceMs: 60_000, now: Date.now() + 120_000 })).toEqual({ removed: 2, partial: 0 });
    const left: string[] = [];
    for await (const o of storage.list(fileKey('p1'))) left.push(o.key);
    expect(left.sort()).toEqual(['p1/posts/kept_aaaaaaaaaa.png', 'p1/posts/thumbs_kept_aaaaaaaaaa.png/100x100']);
    expect(originalOf(fileKey('p1', 'posts', 'thumbs_x_aaaaaaaaaa.png', '0x300'))).toBe('p1/posts/x_aaaaaaaaaa.png');
  });
});
