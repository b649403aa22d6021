import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { ConfigError } from './config';

export type SqliteDatabase = Database.Database;

/**
 * Creates the data directory readable by this user only (0700) when it does not exist yet;
 * an existing directory is left as the operator made it.
 */
export function ensurePrivateDir(dir: string): void {
  if (!fs.existsSync(dir)) fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
}

/** Database files hold hashes and signing keys: readable and writable by this user only. */
function makePrivate(file: string): void {
  for (const f of [file, `${file}-wal`, `${file}-shm`]) {
    if (fs.existsSync(f)) fs.chmodSync(f, 0o600);
  }
}

/**
 * Opens (creating if needed) a SQLite database for one service: WAL journal, a busy timeout so
 * two processes on one file wait instead of failing, foreign keys on. `:memory:` for tests.
 * A new directory is created 0700; the database and its journal files are 0600.
 */
export function openSqlite(file: string): SqliteDatabase {
  if (file !== ':memory:') {
    assertWritableDir(path.dirname(path.resolve(file)));
    // Created 0600 before SQLite opens it: SQLite gives its -wal and -shm files the same mode.
    fs.closeSync(fs.openSync(file, 'a', 0o600));
    makePrivate(file);
  }
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  if (file !== ':memory:') makePrivate(file);
  return db;
}

/** True for better-sqlite3's unique/primary-key violations; adapters turn these into ConflictError. */
export function isSqliteUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/**
 * Creates `dir` if needed and proves a file can be written in it. Otherwise throws a
 * ConfigError naming PLINTH_DATA_DIR (every SQLite file and the credentials live there), so
 * start-up ends with one line and exit status 1 instead of a stack trace.
 */
export function assertWritableDir(dir: string): void {
  const probe = path.join(dir, `.write-probe-${process.pid}`);
  try {
    ensurePrivateDir(dir);
    fs.writeFileSync(probe, '');
    fs.rmSync(probe);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new ConfigError(`PLINTH_DATA_DIR: cannot write to ${path.resolve(dir)} (${e.message.split(',')[0]}).`);
  }
}
