import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { ConfigError } from './config';

export type SqliteDatabase = Database.Database;

/**
 * Opens (creating if needed) a SQLite database for one service: WAL journal, a busy timeout so
 * two processes on one file wait instead of failing, foreign keys on. `:memory:` for tests.
 */
export function openSqlite(file: string): SqliteDatabase {
  if (file !== ':memory:') assertWritableDir(path.dirname(path.resolve(file)));
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
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
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(probe, '');
    fs.rmSync(probe);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new ConfigError(`PLINTH_DATA_DIR: cannot write to ${path.resolve(dir)} (${e.message.split(',')[0]}).`);
  }
}
