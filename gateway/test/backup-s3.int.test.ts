/**
 * `plinth backup <dir> --s3-bucket …` uploads the complete backup through the S3 file-storage
 * adapter, here to s3rver (an S3-compatible server on the local disk, started by this test): every
 * file arrives byte for byte under `<prefix>/<backup name>/`, manifest.json with them, and a copy
 * downloaded from the bucket restores. A failed upload exits 1 with one line and keeps the local
 * backup; a bad bucket name is refused before anything is copied. The data directory is a real
 * one, written by a standalone server run as a process; the CLI runs in-process (runCli).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { runCli } from '../../clients/cli/src/run';
import { startStandalone, stopStandalone } from '@plinth/testing/standalone-process';

const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

describe('plinth backup uploads to S3', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-backup-s3-'));
  const dataDir = path.join(root, 'data');
  let server: S3rver;
  let s3: S3Client;
  let env: Record<string, string>;

  async function cli(extraEnv: Record<string, string>, ...argv: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const code = await runCli(argv, { env: { ...env, ...extraEnv }, out: { write: (s: string) => (out += s) }, err: { write: (s: string) => (err += s) } });
    return { code, out, err };
  }

  async function download(key: string): Promise<Buffer> {
    const r = await s3.send(new GetObjectCommand({ Bucket: 'plinth-backups', Key: key }));
    return Buffer.from(await r.Body!.transformToByteArray());
  }

  beforeAll(async () => {
    server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: path.join(root, 's3rver') });
    const { port } = await server.run();
    const endpoint = `http://127.0.0.1:${port}`;
    s3 = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials });
    await s3.send(new CreateBucketCommand({ Bucket: 'plinth-backups' }));
    env = {
      PLINTH_BACKUP_S3_ENDPOINT: endpoint,
      PLINTH_BACKUP_S3_FORCE_PATH_STYLE: 'true',
      PLINTH_BACKUP_S3_ACCESS_KEY_ID: credentials.accessKeyId,
      PLINTH_BACKUP_S3_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    };
    const s = await startStandalone(dataDir);
    try {
      const res = await fetch(`${s.url}/v1/projects/demo/collections`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${s.secretKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 's3_notes', fields: { body: { type: 'text' } } }),
      });
      expect(res.status).toBe(201);
    } finally {
      await stopStandalone(s);
    }
    // A stored file in a sub-directory travels as its own object.
    fs.mkdirSync(path.join(dataDir, 'files', 'demo'), { recursive: true });
    fs.writeFileSync(path.join(dataDir, 'files', 'demo', 'photo.bin'), Buffer.from([0, 1, 2, 255]));
  }, 60_000);
  afterAll(async () => {
    s3?.destroy();
    await server?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('every file arrives byte for byte under prefix/name/, and a downloaded copy restores', async () => {
    const local = path.join(root, 'plinth-backup-20260102T030000Z');
    const r = await cli({}, 'backup', local, '--data-dir', dataDir, '--s3-bucket', 'plinth-backups', '--s3-prefix', 'nightly/eu');
    expect(r).toMatchObject({ code: 0, err: '' });
    const printed = JSON.parse(r.out) as { files: Array<{ path: string; bytes: number }>; uploaded: { bucket: string; prefix: string; objects: number; bytes: number } };
    const prefix = 'nightly/eu/plinth-backup-20260102T030000Z/';
    expect(printed.uploaded).toMatchObject({ bucket: 'plinth-backups', prefix, objects: printed.files.length + 1 });

    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'plinth-backups', Prefix: prefix }));
    const keys = (listed.Contents ?? []).map((o) => o.Key!.slice(prefix.length)).sort();
    expect(keys).toEqual([...printed.files.map((f) => f.path), 'manifest.json'].sort());
    expect(keys).toEqual(expect.arrayContaining(['records.db', 'credentials.json', 'files/demo/photo.bin']));

    const fetched = path.join(root, 'fetched', 'plinth-backup-20260102T030000Z');
    for (const k of keys) {
      const bytes = await download(prefix + k);
      expect(bytes.equals(fs.readFileSync(path.join(local, k)))).toBe(true);
      fs.mkdirSync(path.dirname(path.join(fetched, k)), { recursive: true });
      fs.writeFileSync(path.join(fetched, k), bytes);
    }
    const restored = path.join(root, 'restored');
    expect(await cli({}, 'restore', fetched, '--data-dir', restored)).toMatchObject({ code: 0, err: '' });
    expect(fs.readFileSync(path.join(restored, 'files', 'demo', 'photo.bin'))).toEqual(Buffer.from([0, 1, 2, 255]));
  }, 30_000);

  it('the bucket from PLINTH_BACKUP_S3_BUCKET; an upload that fails exits 1 with one line and keeps the local backup', async () => {
    const local = path.join(root, 'to-missing-bucket');
    const r = await cli({ PLINTH_BACKUP_S3_BUCKET: 'no-such-bucket' }, 'backup', local, '--data-dir', dataDir);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/^plinth: the backup in .*to-missing-bucket is complete, but the upload to s3:\/\/no-such-bucket\/to-missing-bucket\/ failed: .*NoSuchBucket.*\n$/);
    expect(r.err).not.toContain(credentials.secretAccessKey);
    expect(fs.existsSync(path.join(local, 'manifest.json'))).toBe(true);
  }, 30_000);

  it('a bad bucket name or a prefix without a bucket is refused before anything is copied', async () => {
    const local = path.join(root, 'never');
    const bad = await cli({}, 'backup', local, '--data-dir', dataDir, '--s3-bucket', 'Not_A_Bucket');
    expect(bad).toMatchObject({ code: 1, out: '', err: 'plinth: "Not_A_Bucket" is not an S3 bucket name\n' });
    const lone = await cli({}, 'backup', local, '--data-dir', dataDir, '--s3-prefix', 'nightly');
    expect(lone.code).toBe(2);
    expect(lone.err).toMatch(/^plinth: --s3-prefix needs --s3-bucket/);
    expect(fs.existsSync(local)).toBe(false);
  });
});
