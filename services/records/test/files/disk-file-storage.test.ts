import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileKey } from '../../src/files/storage/file-storage';
import { DiskFileStorage } from '../../src/files/storage/disk-file-storage';
import { describeFileStorageContract } from './file-storage.contract';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
});

async function fresh(): Promise<{ storage: DiskFileStorage; root: string }> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'plinth-files-'));
  dirs.push(root);
  return { storage: await new DiskFileStorage(root).init(), root };
}

describeFileStorageContract('disk', async () => (await fresh()).storage);

describe('DiskFileStorage', () => {
  it('a crash mid-write leaves only a partial file, which the sweeper removes once old enough', async () => {
    const { storage, root } = await fresh();
    // What a process killed mid-write leaves: bytes under .partial, nothing under the key.
    await fs.writeFile(path.join(root, '.partial', 'crashed'), 'half a file');
    expect(await storage.sweepPartial(60_000)).toBe(0);
    expect(await storage.sweepPartial(0)).toBe(1);
    expect(await fs.readdir(path.join(root, '.partial'))).toEqual([]);
  });

  it('keeps every object inside its root', async () => {
    const { storage, root } = await fresh();
    await storage.put(fileKey('p1', 'c', 'r', 'n.bin'), [Buffer.from('x')], { maxBytes: 10 });
    expect(await fs.readFile(path.join(root, 'p1', 'c', 'r', 'n.bin'), 'utf8')).toBe('x');
  });
});
