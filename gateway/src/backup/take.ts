/**
 * `plinth backup <dir>`: a consistent online copy of a standalone data directory, taken next to
 * the running server (the files are only read; WAL mode lets readers and the server's writers go on
 * side by side), then checked, then described by a manifest written last.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isInside, listDataFiles, prepareEmptyDir } from './data-files';
import { BACKUP_FORMAT, BackupError, MANIFEST_FILE, sha256File, type BackupManifest, type ManifestFile } from './manifest';
import { beginSnapshots, checkCopy, copySnapshot, endSnapshots, openSource, tableCounts, type Db } from './sqlite-copy';
import { plinthVersion } from './version';

export interface TakeBackupOptions {
  dataDir: string;
  /** Created (0700) if missing; must be empty, and outside the data directory. */
  outDir: string;
  /** The clock, for tests. */
  now?: () => Date;
}

/**
 * Takes the backup; resolves to its manifest. On any failure the backup directory's content is
 * removed (a partial backup is never left looking complete) and a BackupError says why.
 */
export async function takeBackup(opts: TakeBackupOptions): Promise<BackupManifest> {
  const now = opts.now ?? (() => new Date());
  const dataDir = path.resolve(opts.dataDir);
  const outDir = path.resolve(opts.outDir);
  if (!fs.existsSync(dataDir) || !fs.statSync(dataDir).isDirectory()) throw new BackupError(`no data directory at ${dataDir}`);
  if (isInside(outDir, dataDir)) throw new BackupError(`the backup directory ${outDir} is inside the data directory; choose one outside it`);
  const files = listDataFiles(dataDir);
  if (!files.some((f) => f.kind === 'sqlite')) throw new BackupError(`${dataDir} holds no Plinth database`);
  const problem = prepareEmptyDir(outDir);
  if (problem) throw new BackupError(`cannot back up into ${problem}`);
  try {
    return await copyAll(files, outDir, now);
  } catch (e) {
    for (const entry of fs.readdirSync(outDir)) fs.rmSync(path.join(outDir, entry), { recursive: true, force: true });
    if (e instanceof BackupError) throw e;
    throw new BackupError(`backup failed: ${(e as Error).message}`);
  }
}

async function copyAll(files: ReturnType<typeof listDataFiles>, outDir: string, now: () => Date): Promise<BackupManifest> {
  const databases = files.filter((f) => f.kind === 'sqlite');
  const sources: Db[] = [];
  const counts = new Map<string, Record<string, number>>();
  let pointInTime: Date;
  try {
    for (const f of databases) sources.push(openSource(f.abs));
    pointInTime = now();
    beginSnapshots(sources);
    for (const [i, f] of databases.entries()) {
      counts.set(f.rel, tableCounts(sources[i]!));
      const dest = target(outDir, f.rel);
      await copySnapshot(sources[i]!, dest);
    }
  } finally {
    endSnapshots(sources);
  }
  // Other files after the snapshots: a file stored before the point in time is there (a file
  // deleted while the backup ran may be missing; one written meanwhile may be there too).
  for (const f of files.filter((x) => x.kind === 'file')) {
    const dest = target(outDir, f.rel);
    fs.copyFileSync(f.abs, dest);
    fs.chmodSync(dest, 0o600);
  }
  const listed: ManifestFile[] = files.map((f) => {
    const dest = path.join(outDir, f.rel);
    const entry: ManifestFile = { path: f.rel, kind: f.kind, bytes: fs.statSync(dest).size, sha256: sha256File(dest) };
    const tables = counts.get(f.rel);
    if (tables) entry.tables = tables;
    return entry;
  });
  for (const f of listed) {
    if (f.kind !== 'sqlite') continue;
    const wrong = checkCopy(path.join(outDir, f.path), f.tables);
    if (wrong) throw new BackupError(`the copy of ${f.path} failed its check: ${wrong}`);
  }
  const manifest: BackupManifest = {
    format: BACKUP_FORMAT,
    plinth_version: plinthVersion(),
    point_in_time: pointInTime.toISOString(),
    finished_at: now().toISOString(),
    files: listed,
  };
  // Written last, and renamed into place: a backup with a manifest is a complete one.
  const tmp = path.join(outDir, `${MANIFEST_FILE}.tmp`);
  fs.writeFileSync(tmp, `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(tmp, path.join(outDir, MANIFEST_FILE));
  return manifest;
}

/** `outDir/rel`, its directories created 0700. */
function target(outDir: string, rel: string): string {
  const dest = path.join(outDir, rel);
  fs.mkdirSync(path.dirname(dest), { recursive: true, mode: 0o700 });
  return dest;
}
