/**
 * WriteRetry under a write lock held by another process: the write waits and succeeds once the
 * lock is released, a lock held past the deadline fails with SQLITE_BUSY, and the connection's
 * busy timeout is back afterwards.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WriteRetry, openSqlite } from '@plinth/shared';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-write-retry-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Another process takes the write lock, says so, holds it `ms`, commits and exits. */
async function holdLock(file: string, ms: number): Promise<{ exited: Promise<void> }> {
  const script = `const D = require('better-sqlite3'); const db = new D(${JSON.stringify(file)});
    db.exec('BEGIN IMMEDIATE'); db.prepare('INSERT INTO t (v) VALUES (?)').run('other');
    process.stdout.write('locked\\n'); setTimeout(() => { db.exec('COMMIT'); db.close(); }, ${ms});`;
  const child = spawn(process.execPath, ['-e', script], { cwd: path.resolve(__dirname, '../..'), stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  return { exited };
}

it('waits for a lock another process holds, then writes; the busy timeout is restored', async () => {
  const file = path.join(dir, 'x.db');
  const db = openSqlite(file);
  db.exec('CREATE TABLE t (v TEXT)');
  const { exited } = await holdLock(file, 300);
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
  // The write blocks this thread until the other process commits (about 300 ms).
  const info = new WriteRetry(db).run(() => insert.run('mine'));
  expect(info.changes).toBe(1);
  await exited;
  expect(db.prepare('SELECT v FROM t ORDER BY rowid').pluck().all()).toEqual(['other', 'mine']);
  expect(db.pragma('busy_timeout', { simple: true })).toBe(5000);
  db.close();
});

it('gives up with SQLITE_BUSY when the lock outlasts its deadline', async () => {
  const file = path.join(dir, 'y.db');
  const db = openSqlite(file);
  db.exec('CREATE TABLE t (v TEXT)');
  const { exited } = await holdLock(file, 1500);
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
  expect(() => new WriteRetry(db, 200).run(() => insert.run('mine'))).toThrow(expect.objectContaining({ code: 'SQLITE_BUSY' }) as unknown as Error);
  expect(db.pragma('busy_timeout', { simple: true })).toBe(200);
  await exited;
  db.close();
});
