import { ObjectId } from 'mongodb';
import { createMingoDb } from '@plinth/shared/testing/mingo-db';
import { fileKey } from '../../src/files/storage/file-storage';
import { GridFsFileStorage } from '../../src/files/storage/gridfs-file-storage';
import { describeFileStorageContract } from './file-storage.contract';

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
