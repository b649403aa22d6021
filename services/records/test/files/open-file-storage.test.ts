import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Db } from 'mongodb';
import { createMingoDb } from '@plinth/shared/testing/mingo-db';
import { DiskFileStorage } from '../../src/files/storage/disk-file-storage';
import { fileKey } from '../../src/files/storage/file-storage';
import { GridFsFileStorage } from '../../src/files/storage/gridfs-file-storage';
import { fileStorageKind, openFileStorage } from '../../src/files/storage/open-file-storage';
import { S3FileStorage } from '../../src/files/storage/s3-file-storage';

describe('choosing the file storage', () => {
  it('S3 when a bucket is configured, else GridFS on MongoDB, else the disk', () => {
    const db = {} as Db;
    expect(fileStorageKind({ dataDir: '/d', mongoDb: db, s3: { bucket: 'b' } })).toBe('s3');
    expect(fileStorageKind({ dataDir: '/d', mongoDb: db })).toBe('gridfs');
    expect(fileStorageKind({ dataDir: '/d' })).toBe('disk');
    expect(() => fileStorageKind({})).toThrow(/needs a data directory/);
  });

  it('opens each adapter; the disk one under <dataDir>/files', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'plinth-open-'));
    try {
      const disk = await openFileStorage({ dataDir });
      expect(disk).toBeInstanceOf(DiskFileStorage);
      await disk.put(fileKey('p1', 'c', 'a_aaaaaaaaaa.txt'), [Buffer.from('x')], { maxBytes: 1 });
      expect(await fs.readFile(path.join(dataDir, 'files', 'p1', 'c', 'a_aaaaaaaaaa.txt'), 'utf8')).toBe('x');
      expect(await openFileStorage({ dataDir, mongoDb: createMingoDb() })).toBeInstanceOf(GridFsFileStorage);
      const s3 = await openFileStorage({ dataDir, s3: { bucket: 'b', endpoint: 'http://127.0.0.1:1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } } });
      expect(s3).toBeInstanceOf(S3FileStorage);
      await s3.close();
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });
});
