/**
 * What a standalone data directory holds, found by looking rather than by a list of names: every
 * SQLite database (recognised by its header, whatever service made it), and every other regular
 * file (credentials.json, stored files), minus SQLite's own journal files.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface DataFile {
  /** Relative to the data directory, `/`-separated. */
  rel: string;
  abs: string;
  kind: 'sqlite' | 'file';
}

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');
/** SQLite's journals (a snapshot of the database includes what they hold) and the start-up write probe. */
const SKIPPED = /(-wal|-shm|-journal)$|^\.write-probe-/;

/** Every file of `dataDir` to back up, databases first, in a stable (sorted) order. */
export function listDataFiles(dataDir: string): DataFile[] {
  const found: DataFile[] = [];
  const walk = (dir: string, relDir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const abs = path.join(dir, entry.name);
      const rel = relDir ? `${relDir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(abs, rel);
      else if (entry.isFile() && !SKIPPED.test(entry.name)) found.push({ rel, abs, kind: isSqlite(abs) ? 'sqlite' : 'file' });
      // symbolic links, sockets and the like are not Plinth's data
    }
  };
  walk(dataDir, '');
  return [...found.filter((f) => f.kind === 'sqlite'), ...found.filter((f) => f.kind === 'file')];
}

function isSqlite(file: string): boolean {
  const fd = fs.openSync(file, 'r');
  try {
    const head = Buffer.alloc(SQLITE_HEADER.length);
    return fs.readSync(fd, head, 0, head.length, 0) === head.length && head.equals(SQLITE_HEADER);
  } finally {
    fs.closeSync(fd);
  }
}

/** True when `inner` is `outer` or lies inside it (both resolved). */
export function isInside(inner: string, outer: string): boolean {
  const rel = path.relative(path.resolve(outer), path.resolve(inner));
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** Creates `dir` (0700) or accepts it when it exists and is empty; a message naming the problem otherwise. */
export function prepareEmptyDir(dir: string): string | null {
  if (fs.existsSync(dir)) {
    if (!fs.statSync(dir).isDirectory()) return `${dir} exists and is not a directory`;
    if (fs.readdirSync(dir).length > 0) return `${dir} is not empty`;
    return null;
  }
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  return null;
}
