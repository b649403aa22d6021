/**
 * SQLite side of backup and restore: opening read snapshots, copying them with SQLite's online
 * backup API, and checking a copy (integrity and row counts).
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';

export type Db = Database.Database;

/** Pages copied per step of the backup API (4 MB at the default page size); the event loop runs between steps. */
const PAGES_PER_STEP = 1000;

/** Opens a live database for reading only; it never changes the file. */
export function openSource(file: string): Db {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  return db;
}

/**
 * Starts a read transaction on every database, one after another in one synchronous loop (no
 * I/O wait between them): from here on each connection sees its file as it was at that moment,
 * however much the server writes, until `endSnapshots`. In WAL mode this blocks no writer.
 */
export function beginSnapshots(dbs: Db[]): void {
  for (const db of dbs) db.exec('BEGIN');
  // A read transaction takes its snapshot at its first read.
  for (const db of dbs) db.prepare('SELECT count(*) FROM sqlite_master').get();
}

export function endSnapshots(dbs: Db[]): void {
  for (const db of dbs) {
    try {
      if (db.inTransaction) db.exec('COMMIT');
    } finally {
      db.close();
    }
  }
}

/** Rows per table (sqlite_* internals left out), in the connection's current snapshot. */
export function tableCounts(db: Db): Record<string, number> {
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name").pluck().all() as string[];
  const counts: Record<string, number> = {};
  for (const t of tables) counts[t] = db.prepare(`SELECT count(*) FROM "${t.replace(/"/g, '""')}"`).pluck().get() as number;
  return counts;
}

/**
 * Copies the snapshot `source` holds into `dest` (a new file) with the online backup API, then
 * makes the copy a single self-contained file (rollback journal instead of WAL), so that its bytes
 * — and its checksum — do not change when it is opened to be checked. SQLite's own restart rule
 * (a backup restarts when another connection writes) does not apply: the source stays inside its
 * read transaction, so every step reads the same snapshot.
 */
export async function copySnapshot(source: Db, dest: string): Promise<void> {
  // Created 0600 before SQLite writes to it: the copy holds what the original holds (password hashes, keys).
  fs.closeSync(fs.openSync(dest, 'wx', 0o600));
  await source.backup(dest, { progress: () => PAGES_PER_STEP });
  const copy = new Database(dest);
  try {
    copy.pragma('journal_mode = DELETE');
  } finally {
    copy.close();
  }
}

/**
 * Checks a copied database: `PRAGMA integrity_check` answers ok, and, when given, each table has
 * the expected rows. Returns what is wrong, or null.
 */
export function checkCopy(file: string, expected?: Record<string, number>): string | null {
  let db: Db;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
  } catch (e) {
    return `cannot open it: ${(e as Error).message}`;
  }
  try {
    const result = db.pragma('integrity_check', { simple: true });
    if (result !== 'ok') return `integrity check failed: ${oneLine(String(result))}`;
    if (expected) {
      const got = tableCounts(db);
      for (const [table, rows] of Object.entries(expected)) {
        if (got[table] !== rows) return `table ${table} has ${got[table] ?? 'no'} rows, the manifest says ${rows}`;
      }
    }
    return null;
  } catch (e) {
    // A damaged file often fails before the check can answer ("database disk image is malformed").
    return `integrity check failed: ${oneLine((e as Error).message)}`;
  } finally {
    db.close();
  }
}

/** SQLite's report may run to many lines; the operator gets one, short. */
function oneLine(text: string): string {
  const line = text.replace(/\*\*\* in database \w+ \*\*\*/g, '').trim().split(/\s*\n\s*/).join('; ');
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
