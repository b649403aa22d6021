/**
 * `plinth restore <backup> --data-dir <dir>`: checks a backup end to end (every file's SHA-256,
 * then each database's integrity and row counts), and only then copies it into an empty data
 * directory, where `npm start` runs on it as on the original.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isInside, prepareEmptyDir } from './data-files';
import { BackupError, readManifest, sha256File, type BackupManifest } from './manifest';
import { checkCopy } from './sqlite-copy';
import { migrateEventLog, openSqlite, renewEventLogEpoch } from '@plinth/shared';

/** Checks the backup in `dir`; resolves to its manifest, or throws a BackupError naming the first fault. */
export function verifyBackup(dir: string): BackupManifest {
  const backupDir = path.resolve(dir);
  if (!fs.existsSync(backupDir) || !fs.statSync(backupDir).isDirectory()) throw new BackupError(`no backup directory at ${backupDir}`);
  const manifest = readManifest(backupDir);
  for (const f of manifest.files) {
    const file = path.join(backupDir, f.path);
    if (!fs.existsSync(file)) throw new BackupError(`the backup is corrupted: ${f.path} is missing`);
    if (fs.statSync(file).size !== f.bytes || sha256File(file) !== f.sha256) {
      throw new BackupError(`the backup is corrupted: ${f.path} does not match its checksum in the manifest`);
    }
  }
  for (const f of manifest.files) {
    if (f.kind !== 'sqlite') continue;
    const wrong = checkCopy(path.join(backupDir, f.path), f.tables);
    if (wrong) throw new BackupError(`the backup is corrupted: ${f.path}: ${wrong}`);
  }
  return manifest;
}

export interface RestoreOptions {
  backupDir: string;
  /** Created (0700) if missing; must be empty. */
  dataDir: string;
}

/**
 * Verifies the backup, then copies its files into the data directory (0600 each). Refuses a
 * non-empty target before reading anything; on a failure half-way the target is emptied again.
 */
export function restoreBackup(opts: RestoreOptions): BackupManifest {
  const backupDir = path.resolve(opts.backupDir);
  const dataDir = path.resolve(opts.dataDir);
  if (isInside(dataDir, backupDir) || isInside(backupDir, dataDir)) throw new BackupError('the data directory and the backup must not contain one another');
  if (fs.existsSync(dataDir) && (!fs.statSync(dataDir).isDirectory() || fs.readdirSync(dataDir).length > 0)) {
    throw new BackupError(`refusing to restore into ${dataDir}: it is not an empty directory (restore into a new one, then point PLINTH_DATA_DIR at it)`);
  }
  const manifest = verifyBackup(backupDir);
  const problem = prepareEmptyDir(dataDir);
  if (problem) throw new BackupError(`cannot restore into ${problem}`);
  try {
    for (const f of manifest.files) {
      const dest = path.join(dataDir, f.path);
      fs.mkdirSync(path.dirname(dest), { recursive: true, mode: 0o700 });
      fs.copyFileSync(path.join(backupDir, f.path), dest);
      fs.chmodSync(dest, 0o600);
    }
    // The event log rewinds with the data: a new epoch, so no position handed out after the
    // backup is resumed from (docs/realtime.md "Positions and epochs").
    const records = path.join(dataDir, 'records.db');
    if (fs.existsSync(records)) {
      const db = openSqlite(records);
      try {
        migrateEventLog(db);
        renewEventLogEpoch(db);
      } finally {
        db.close();
      }
    }
  } catch (e) {
    for (const entry of fs.readdirSync(dataDir)) fs.rmSync(path.join(dataDir, entry), { recursive: true, force: true });
    throw new BackupError(`restore failed: ${(e as Error).message}`);
  }
  return manifest;
}
