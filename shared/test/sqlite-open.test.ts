import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { openSqlite } from '../src/sqlite';

/**
 * Replicas started together open one new file at once (two auth processes on auth.db). Switching
 * the file to WAL needs it to itself, and SQLite answers SQLITE_BUSY at once, without its busy
 * timeout, when another connection is writing: a start then ended with "database is locked".
 */
describe('openSqlite on a file another process is opening or writing', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlite-open-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** Another connection, in a thread of its own, holds the write lock of a new (not yet WAL) file for `holdMs`. */
  async function writerHolding(file: string, holdMs: number): Promise<Worker> {
    const other = new Worker(
      `const { workerData, parentPort } = require('node:worker_threads');
       const db = new (require('better-sqlite3'))(workerData.file);
       db.exec('CREATE TABLE IF NOT EXISTS notes (body TEXT)');
       db.exec('BEGIN IMMEDIATE');
       db.prepare('INSERT INTO notes (body) VALUES (?)').run('written by the other process');
       parentPort.postMessage('holding');
       setTimeout(() => { db.exec('COMMIT'); db.close(); parentPort.postMessage('done'); }, workerData.holdMs);`,
      { eval: true, workerData: { file, holdMs } },
    );
    await new Promise((resolve) => other.once('message', resolve));
    return other;
  }

  it('waits for the other writer, switches the file to WAL and sees what it wrote', async () => {
    const file = path.join(dir, 'shared.db');
    const other = await writerHolding(file, 300);
    const done = new Promise((resolve) => other.once('message', resolve));
    const db = openSqlite(file); // threw "database is locked" at once before
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.prepare('SELECT body FROM notes').all()).toEqual([{ body: 'written by the other process' }]);
    db.prepare('INSERT INTO notes (body) VALUES (?)').run('written after');
    expect(db.prepare('SELECT count(*) AS n FROM notes').get()).toEqual({ n: 2 });
    db.close();
    await done;
    await other.terminate();
  });

  it('a file already in WAL opens without asking for the write lock', async () => {
    const file = path.join(dir, 'wal.db');
    openSqlite(file).close();
    const other = new Worker(
      `const { workerData, parentPort } = require('node:worker_threads');
       const db = new (require('better-sqlite3'))(workerData);
       db.exec('CREATE TABLE notes (body TEXT)');
       db.exec('BEGIN IMMEDIATE');
       parentPort.postMessage('holding');
       setTimeout(() => { db.exec('COMMIT'); db.close(); }, 10_000);`,
      { eval: true, workerData: file },
    );
    await new Promise((resolve) => other.once('message', resolve));
    const started = Date.now();
    const db = openSqlite(file);
    // Reading goes on beside the writer (WAL), which made the table before it took the lock; nothing waited for its 10 s lock.
    expect(db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'notes'").get()).toEqual({ n: 1 });
    expect(Date.now() - started).toBeLessThan(5000);
    db.close();
    await other.terminate();
  });
});
