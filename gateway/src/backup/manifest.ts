/**
 * The manifest of a standalone backup: `manifest.json`, written last, so a directory without one
 * is an unfinished backup. It lists every file with its size and SHA-256, and for each SQLite
 * database the row count of each table at the backup's point in time.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export const MANIFEST_FILE = 'manifest.json';
/** Bumped when a backup's layout changes; a restore refuses a format it does not know. */
export const BACKUP_FORMAT = 'plinth-backup/1';

export interface ManifestFile {
  /** Relative to the data directory (and to the backup directory), with `/` separators. */
  path: string;
  kind: 'sqlite' | 'file';
  bytes: number;
  sha256: string;
  /** SQLite only: rows per table (sqlite_* tables left out) in the snapshot that was copied. */
  tables?: Record<string, number>;
}

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  plinth_version: string;
  /** When the snapshots of every database were opened: the backup's point in time. */
  point_in_time: string;
  finished_at: string;
  files: ManifestFile[];
}

/** One line for the operator: the backup cannot be used, and why. */
export class BackupError extends Error {}

/** SHA-256 of a file, hex, read in chunks (databases may be large). */
export function sha256File(file: string): string {
  const hash = createHash('sha256');
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    for (;;) {
      const n = fs.readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      hash.update(buf.subarray(0, n));
    }
  } finally {
    fs.closeSync(fd);
  }
  return hash.digest('hex');
}

/** Reads and checks the shape of `<dir>/manifest.json`; a BackupError when it is missing or unusable. */
export function readManifest(dir: string): BackupManifest {
  const file = path.join(dir, MANIFEST_FILE);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new BackupError(`${dir} is not a complete Plinth backup: it has no ${MANIFEST_FILE}`);
    throw new BackupError(`cannot read ${file}: ${code ?? (e as Error).message}`);
  }
  let m: Partial<BackupManifest>;
  try {
    m = JSON.parse(text) as Partial<BackupManifest>;
  } catch {
    throw new BackupError(`${file} is not JSON: the backup is corrupted`);
  }
  if (m.format !== BACKUP_FORMAT) throw new BackupError(`${file}: unknown backup format ${JSON.stringify(m.format)} (this Plinth reads ${BACKUP_FORMAT})`);
  if (!Array.isArray(m.files) || m.files.some((f) => !isManifestFile(f))) throw new BackupError(`${file} lists its files wrongly: the backup is corrupted`);
  return m as BackupManifest;
}

function isManifestFile(f: unknown): f is ManifestFile {
  const o = f as Partial<ManifestFile> | null;
  return (
    !!o &&
    typeof o.path === 'string' &&
    safeRelative(o.path) &&
    (o.kind === 'sqlite' || o.kind === 'file') &&
    typeof o.bytes === 'number' &&
    typeof o.sha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(o.sha256)
  );
}

/** A manifest path may not leave the directory it is relative to (no `..`, not absolute). */
function safeRelative(p: string): boolean {
  return p.length > 0 && !path.isAbsolute(p) && !p.split('/').some((part) => part === '..' || part === '' || part === '.');
}
