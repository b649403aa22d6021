export * from './app';
export * from './config';
export * from './service';
export type { AccessContext, AccessPolicy, AuthInfo } from './domain/access-policy';
export type { RecordStore } from './store/record-store';
export { SqliteRecordStore } from './store/sqlite/sqlite-record-store';
export { MongoRecordStore } from './store/mongo/mongo-record-store';
export { fileKey, isKeySegment, type FileKey, type FileStorage } from './files/storage/file-storage';
export { openFileStorage, type FileStorageConfig } from './files/storage/open-file-storage';
