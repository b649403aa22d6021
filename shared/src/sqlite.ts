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
 *
 * Several processes share these files (standalone workers). The busy timeout only helps a
 * transaction that asks for the write lock up front: a read-then-write transaction must run
 * with better-sqlite3's `.immediate()` (BEGIN IMMEDIATE), or its upgrade from reader to writer
 * fails with SQLITE_BUSY(_SNAPSHOT) without waiting when another process wrote in between.
 * A single statement (an upsert, `UPDATE … RETURNING`) is its own immediate transaction.
 */
export function openSqlite(file: string): SqliteDatabase {
  if (file !== ':memory:') {
    assertWritableDir(path.dirname(path.resolve(file)));
    // Created 0600 before SQLite opens it: SQLite gives its -wal and -shm files the same mode.
    fs.closeSync(fs.openSync(file, 'a', 0o600));
    makePrivate(file);
  }
  const db = new Database(file);
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  useWal(db);
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  if (file !== ':memory:') makePrivate(file);
  return db;
}

/** How long a connection waits for a lock another connection holds before SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 5000;

/**
 * Switches the file to WAL (a property of the file: once one process did it, the others find it
 * done). The switch needs the file to itself, and SQLite does not run the busy handler for it:
 * a process opening a new file while another opens it too, or writes to it, gets SQLITE_BUSY at
 * once. So the switch is tried again, after 1 ms, doubling up to 50 ms, within the busy timeout.
 */
function useWal(db: SqliteDatabase): void {
  const until = Date.now() + BUSY_TIMEOUT_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      if (db.pragma('journal_mode', { simple: true }) === 'wal') return;
      db.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if (!isBusy(err) || Date.now() >= until) throw err;
    }
    Atomics.wait(SLEEP, 0, 0, Math.min(50, 2 ** attempt));
  }
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

const SLEEP = new Int32Array(new SharedArrayBuffer(4));

/** SQLITE_BUSY and its extended codes: another connection holds the lock wanted. */
export function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/**
 * Runs hot-path writes when other processes write to the same file. SQLite's own busy handler
 * sleeps 1 ms, then 2, 5, 10 ms… between tries, and since better-sqlite3 is synchronous the whole
 * event loop sleeps with it: under a steady stream of writes from two workers that idled each
 * worker more than the writes themselves took. Here the busy timeout is off for the write, and
 * a lock found taken is retried after 0.05 ms, doubling up to 2 ms, for at most `timeoutMs`.
 * Only for a write that had no effect when it failed with SQLITE_BUSY: one statement, or a
 * transaction run with `.immediate()` (it fails at BEGIN or not at all).
 */
export class WriteRetry {
  constructor(
    private readonly db: SqliteDatabase,
    /** How long a write may wait for the lock, in all, before its SQLITE_BUSY is thrown. */
    readonly timeoutMs = 5000,
  ) {}

  /**
   * One try of `write` without waiting: SQLITE_BUSY at once when another connection holds the
   * lock. For callers that wait for the lock without blocking their event loop (they try again
   * later, at most `timeoutMs` in all).
   */
  once<T>(write: () => T): T {
    return this.withoutBusyTimeout(write);
  }

  run<T>(write: () => T): T {
    return this.withoutBusyTimeout(() => {
      const until = Date.now() + this.timeoutMs;
      for (let attempt = 0; ; attempt++) {
        try {
          return write();
        } catch (err) {
          if (!isBusy(err) || Date.now() >= until) throw err;
        }
        Atomics.wait(SLEEP, 0, 0, Math.min(2, 0.05 * 2 ** Math.min(attempt, 6)));
      }
    });
  }

  /** Runs `fn` with SQLite's busy handler off, and puts the connection's busy timeout back after. */
  private withoutBusyTimeout<T>(fn: () => T): T {
    // Not a prepared statement: SQLite applies this pragma when it compiles it, so a prepared
    // copy run again may leave the old value in place.
    this.db.pragma('busy_timeout = 0');
    try {
      return fn();
    } finally {
      this.db.pragma(`busy_timeout = ${Math.floor(this.timeoutMs)}`);
    }
  }
}

/** What LockWait.commit returns when the lock was taken and the commit is scheduled again. */
export const LATER: unique symbol = Symbol('later');

/**
 * Waiting for a write lock without blocking the event loop, for writers that queue their writes
 * and commit them in groups. `commit` tries once (WriteRetry.once); when another connection holds
 * the lock it schedules `again` `retryMs` later and returns LATER, so the process serves requests
 * meanwhile (and what they write joins the waiting group), until WriteRetry's `timeoutMs` has
 * passed since the first failed try: then, and for any other error, it throws. `wait` (closing,
 * purging): wait for the lock in place instead, blocking, within the same budget.
 */
export class LockWait {
  private timer: NodeJS.Timeout | undefined;
  private since: number | undefined;

  constructor(
    private readonly writes: WriteRetry,
    private readonly retryMs = 1,
  ) {}

  commit<T>(write: () => T, again: () => void, wait = false): T | typeof LATER {
    // A try asked for while one is scheduled (closing) replaces it.
    clearTimeout(this.timer);
    this.timer = undefined;
    try {
      const value = wait ? this.writes.run(write) : this.writes.once(write);
      this.since = undefined;
      return value;
    } catch (err) {
      const now = Date.now();
      this.since ??= now;
      if (wait || !isBusy(err) || now - this.since >= this.writes.timeoutMs) {
        this.since = undefined;
        throw err;
      }
      this.timer = setTimeout(again, this.retryMs);
      return LATER;
    }
  }
}
