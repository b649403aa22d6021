/**
 * The orphan sweep of a project (files/project-file-sweeps.ts) over a real SQLite record store and
 * disk storage: a file stored for a record that never committed (a crash between upload and
 * commit) is removed with its thumbnail; files records hold are kept, in every collection.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { asProjectId, type Collection } from '@plinth/shared';
import { sweepProjectFiles } from '../../src/files/project-file-sweeps';
import { DiskFileStorage } from '../../src/files/storage/disk-file-storage';
import { fileKey } from '../../src/files/storage/file-storage';
import { SqliteRecordStore } from '../../src/store/sqlite/sqlite-record-store';

const P = asProjectId('proj-sweep');
const T0 = '2026-01-01T00:00:00.000Z';
const POSTS: Collection = {
  name: 'posts',
  fields: { cover: { type: 'file', required: false, unique: false, indexed: false }, docs: { type: 'files', required: false, unique: false, indexed: false } },
  rules: {},
  revision: 1,
  created_at: T0,
  updated_at: T0,
};
const meta = (name: string) => ({ name, original_name: name, size: 2, type: 'text/plain', sha256: 'a'.repeat(64), created_at: T0 });

let root: string;
beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'plinth-sweep-'));
});
afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

it('removes the files no record holds (and their thumbnails), keeps the held ones', async () => {
  const storage = await new DiskFileStorage(root).init();
  const store = await SqliteRecordStore.open(':memory:');
  try {
    await store.createCollection(P, POSTS);
    await store.insertRecord(P, POSTS, { id: 'rec_1', version: 1, created_at: T0, updated_at: T0, cover: meta('kept_aaaaaaaaaa.txt'), docs: [meta('list_bbbbbbbbbb.txt')] });
    for (const name of ['kept_aaaaaaaaaa.txt', 'list_bbbbbbbbbb.txt', 'crash_cccccccccc.txt']) {
      await storage.put(fileKey(P, 'posts', name), [Buffer.from('hi')], { maxBytes: 10 });
    }
    await storage.put(fileKey(P, 'posts', 'thumbs_crash_cccccccccc.txt', '10x10'), [Buffer.from('t')], { maxBytes: 10 });
    expect(await sweepProjectFiles(storage, store, P, 0)).toBe(2);
    expect(await storage.stat(fileKey(P, 'posts', 'crash_cccccccccc.txt'))).toBeNull();
    expect(await storage.stat(fileKey(P, 'posts', 'thumbs_crash_cccccccccc.txt', '10x10'))).toBeNull();
    expect(await storage.stat(fileKey(P, 'posts', 'kept_aaaaaaaaaa.txt'))).not.toBeNull();
    expect(await storage.stat(fileKey(P, 'posts', 'list_bbbbbbbbbb.txt'))).not.toBeNull();
    // Within the grace period nothing is touched: its record may be about to commit.
    await storage.put(fileKey(P, 'posts', 'young_dddddddddd.txt'), [Buffer.from('hi')], { maxBytes: 10 });
    expect(await sweepProjectFiles(storage, store, P)).toBe(0);
  } finally {
    await store.close();
    await storage.close();
  }
});
