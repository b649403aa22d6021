/** Standalone backups: take (`plinth backup`), verify and restore (`plinth restore`), and the schedule. */
export { BACKUP_FORMAT, BackupError, MANIFEST_FILE, readManifest, type BackupManifest, type ManifestFile } from './manifest';
export { takeBackup, type TakeBackupOptions } from './take';
export { restoreBackup, verifyBackup, type RestoreOptions } from './restore';
export { checkS3Target, uploadBackup, type S3BackupTarget, type UploadResult } from './upload';
