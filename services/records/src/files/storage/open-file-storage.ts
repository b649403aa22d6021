/**
 * Chooses and opens the file storage from the service's configuration (docs/files.md
 * "Storage"): S3 when a bucket is configured, else GridFS when records run on MongoDB (the
 * cluster), else the local disk under the data directory (standalone). Adapters get explicit
 * options; only the service's config reads the environment.
 */
import path from 'node:path';
import type { Db } from 'mongodb';
import type { FileStorage } from './file-storage';
import { DiskFileStorage } from './disk-file-storage';

export interface FileStorageConfig {
  /** Standalone: files go to `<dataDir>/files`. */
  dataDir?: string;
  /** Records' MongoDB database, when records run on MongoDB. */
  mongoDb?: Db;
  s3?: {
    bucket: string;
    keyPrefix?: string;
    endpoint?: string;
    region?: string;
    forcePathStyle?: boolean;
    credentials?: { accessKeyId: string; secretAccessKey: string };
  };
}

export type FileStorageKind = 's3' | 'gridfs' | 'disk';

export function fileStorageKind(cfg: FileStorageConfig): FileStorageKind {
  if (cfg.s3) return 's3';
  if (cfg.mongoDb) return 'gridfs';
  if (cfg.dataDir) return 'disk';
  throw new Error('File storage needs a data directory, a MongoDB database or an S3 bucket.');
}

/** Opens the chosen adapter; the S3 and MongoDB drivers are loaded only when used. */
export async function openFileStorage(cfg: FileStorageConfig): Promise<FileStorage> {
  switch (fileStorageKind(cfg)) {
    case 's3': {
      const s3 = cfg.s3 as NonNullable<FileStorageConfig['s3']>;
      const { S3FileStorage } = await import('./s3-file-storage');
      return new S3FileStorage({
        bucket: s3.bucket,
        keyPrefix: s3.keyPrefix,
        client: { endpoint: s3.endpoint, region: s3.region ?? 'us-east-1', forcePathStyle: s3.forcePathStyle, credentials: s3.credentials },
      });
    }
    case 'gridfs': {
      const { GridFsFileStorage } = await import('./gridfs-file-storage');
      return new GridFsFileStorage(cfg.mongoDb as Db).init();
    }
    case 'disk':
      return new DiskFileStorage(path.join(cfg.dataDir as string, 'files')).init();
  }
}
