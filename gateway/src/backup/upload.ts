/**
 * `plinth backup <dir> --s3-bucket B`: after a backup is complete and checked on disk, its files
 * are uploaded to an S3-compatible bucket through the records service's S3 file-storage adapter
 * (one PutObject, or a multipart upload sent part by part, per file), under
 * `<prefix>/<backup name>/`. `manifest.json` goes last, so a copy in the bucket without it is an
 * unfinished upload, as on disk. Each object's SHA-256, computed as it is sent, must match the
 * manifest's: a file that changed after the backup was checked is refused.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FileKey, FileStorage } from '@plinth/records';
import { BackupError, MANIFEST_FILE, type BackupManifest } from './manifest';

export interface S3BackupTarget {
  bucket: string;
  /** Objects go under `<prefix>/<backup name>/…`; no prefix: `<backup name>/…`. */
  prefix?: string;
  endpoint?: string;
  region?: string;
  forcePathStyle?: boolean;
  /** Else the AWS SDK's default chain (AWS_ACCESS_KEY_ID…, a profile, an instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

export interface UploadResult {
  bucket: string;
  /** The key prefix of this backup's objects, ending in `/`. */
  prefix: string;
  objects: number;
  bytes: number;
}

const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

type Records = typeof import('@plinth/records');
/** The records service's storage code (and the AWS SDK) are loaded only when a backup is uploaded. */
const records = (): Promise<Records> => import('@plinth/records');

/** The prefix's segments, checked; a BackupError names what is wrong. */
function prefixSegments({ isKeySegment }: Records, prefix: string | undefined): string[] {
  const segments = (prefix ?? '').split('/').filter((s) => s !== '');
  for (const s of segments) if (!isKeySegment(s)) throw new BackupError(`the S3 prefix ${JSON.stringify(prefix)} may hold only letters, digits, ".", "_", "-" and "/"`);
  return segments;
}

/** Checks the target before a backup is taken (a bad bucket name fails at once, not after the copy). */
export async function checkS3Target(target: S3BackupTarget): Promise<void> {
  if (!BUCKET.test(target.bucket)) throw new BackupError(`${JSON.stringify(target.bucket)} is not an S3 bucket name`);
  prefixSegments(await records(), target.prefix);
}

/** Uploads the complete backup in `dir` (described by `manifest`); the manifest last. */
export async function uploadBackup(dir: string, manifest: BackupManifest, target: S3BackupTarget): Promise<UploadResult> {
  await checkS3Target(target);
  const r = await records();
  const { fileKey, isKeySegment, openFileStorage } = r;
  const name = path.basename(path.resolve(dir));
  if (!isKeySegment(name)) throw new BackupError(`the backup directory's name ${JSON.stringify(name)} cannot be an S3 key (use letters, digits, ".", "_", "-")`);
  const base = [...prefixSegments(r, target.prefix), name];
  const storage = await openFileStorage({
    s3: { bucket: target.bucket, endpoint: target.endpoint, region: target.region, forcePathStyle: target.forcePathStyle, credentials: target.credentials },
  });
  const files = [...manifest.files.map((f) => ({ rel: f.path, bytes: f.bytes, sha256: f.sha256 as string | undefined })), { rel: MANIFEST_FILE, bytes: fs.statSync(path.join(dir, MANIFEST_FILE)).size, sha256: undefined }];
  let bytes = 0;
  try {
    for (const f of files) {
      const key = fileKey(...base, ...f.rel.split('/'));
      const stored = await put(storage, key, path.join(dir, f.rel), f.bytes);
      if (f.sha256 && stored.sha256 !== f.sha256) throw new BackupError(`${f.rel} changed after the backup was checked; nothing more was uploaded`);
      bytes += stored.size;
    }
  } catch (e) {
    if (e instanceof BackupError) throw e;
    throw new BackupError(`the upload to s3://${target.bucket}/${base.join('/')}/ failed: ${describe(e)}`);
  } finally {
    await storage.close();
  }
  return { bucket: target.bucket, prefix: `${base.join('/')}/`, objects: files.length, bytes };
}

async function put(storage: FileStorage, key: FileKey, file: string, bytes: number): Promise<{ size: number; sha256: string }> {
  const stream = fs.createReadStream(file, { highWaterMark: 1 << 20 });
  try {
    return await storage.put(key, stream, { maxBytes: bytes });
  } finally {
    stream.destroy();
  }
}

/** One line from an S3 error (its code, e.g. NoSuchBucket, AccessDenied), never a credential. */
function describe(e: unknown): string {
  const err = e as { name?: string; message?: string; code?: string };
  const first = (err.message ?? String(e)).split('\n')[0]!;
  return err.name && err.name !== 'Error' && !first.includes(err.name) ? `${err.name}: ${first}` : first;
}
