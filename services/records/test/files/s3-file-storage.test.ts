import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { S3FileStorage } from '../../src/files/storage/s3-file-storage';
import { describeFileStorageContract } from './file-storage.contract';

// s3rver: an S3-compatible server on the local disk, started by this test on a free port.
let server: S3rver;
let dir: string;
let endpoint: string;
let n = 0;
const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'plinth-s3rver-'));
  server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir });
  const { port } = await server.run();
  endpoint = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  await server.close();
  await fs.rm(dir, { recursive: true, force: true });
});

describeFileStorageContract('s3 on s3rver', async () => {
  const bucket = `plinth-test-${++n}`;
  const client = { endpoint, region: 'us-east-1', forcePathStyle: true, credentials };
  const admin = new S3Client(client);
  await admin.send(new CreateBucketCommand({ Bucket: bucket }));
  admin.destroy();
  return new S3FileStorage({ bucket, client });
});
