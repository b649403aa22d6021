import { randomUUID } from 'node:crypto';
import { GridFSBucket, MongoClient, ObjectId } from 'mongodb';
import { createMingoDb } from '@plinth/shared/testing/mingo-db';
import { fileKey } from '../../src/files/storage/file-storage';
import { GridFsFileStorage } from '../../src/files/storage/gridfs-file-storage';
import { describeFileStorageContract, pattern, readAll } from './file-storage.contract';

describeFileStorageContract('gridfs on the mingo stand-in', async () => new GridFsFileStorage(createMingoDb()).init(), { largeBytes: 3 * 1024 * 1024 + 17 });

describe('GridFsFileStorage', () => {
  it('a crash mid-write leaves chunks and a partial marker, which the sweeper removes once old enough', async () => {
    const db = createMingoDb();
    const storage = await new GridFsFileStorage(db).init();
    const id = new ObjectId().toHexString();
    await db.collection<{ _id: string; key: string; started_at: Date }>('plinth_files.partial').insertOne({ _id: id, key: 'p1/c/r/x.bin', started_at: new Date() });
    await db.collection('plinth_files.chunks').insertOne({ files_id: id, n: 0, data: Buffer.from('half') });
    expect(await storage.sweepPartial(60_000)).toBe(0);
    expect(await storage.sweepPartial(0)).toBe(1);
    expect(await db.collection('plinth_files.chunks').countDocuments({})).toBe(0);
    expect(await storage.stat(fileKey('p1', 'c', 'r', 'x.bin'))).toBeNull();
  });

  it('writes the GridFS layout: a files document with length and chunkSize, chunks numbered from 0', async () => {
    const db = createMingoDb();
    const storage = await new GridFsFileStorage(db).init();
    await storage.put(fileKey('p1', 'c', 'r', 'x.bin'), [Buffer.alloc(300 * 1024, 1)], { maxBytes: 1024 * 1024 });
    const file = await db.collection('plinth_files.files').findOne({ filename: 'p1/c/r/x.bin' });
    expect(file).toMatchObject({ length: 300 * 1024, chunkSize: 255 * 1024 });
    const chunks = await db.collection('plinth_files.chunks').find({ files_id: file?._id }).sort({ n: 1 }).toArray();
    expect(chunks.map((c) => c.n)).toEqual([0, 1]);
  });
});

// Opt-in: a real MongoDB server when MONGO_URL is set — a fresh database per test, dropped after
// (docs/testing.md).
const MONGO_URL = process.env.MONGO_URL;

async function openReal(): Promise<{ storage: GridFsFileStorage; bucket: GridFSBucket }> {
  const client = new MongoClient(MONGO_URL as string, { writeConcern: { w: 'majority' } });
  await client.connect();
  const db = client.db(`plinth_files_test_${randomUUID().slice(0, 8)}`);
  const storage = await new GridFsFileStorage(db, 'plinth_files', async () => {
    await db.dropDatabase();
    await client.close();
  }).init();
  return { storage, bucket: new GridFSBucket(db, { bucketName: 'plinth_files' }) };
}

if (!MONGO_URL) {
  process.stdout.write('gridfs-file-storage: MONGO_URL is not set, so the real-server contract is not registered (docs/testing.md)\n');
} else {
  describeFileStorageContract('gridfs on real MongoDB (MONGO_URL)', async () => (await openReal()).storage);

  it('the driver\'s GridFSBucket reads what the adapter wrote (real MongoDB)', async () => {
    const { storage, bucket } = await openReal();
    try {
      const body = pattern(600 * 1024);
      await storage.put(fileKey('p1', 'c', 'r', 'x.bin'), [body], { maxBytes: 1 << 20 });
      expect(await readAll(bucket.openDownloadStreamByName('p1/c/r/x.bin'))).toEqual(body);
    } finally {
      await storage.close();
    }
  });
}
