/**
 * Group commit of record writes (sqlite-write-batch.ts): the writes of one turn of the event loop
 * commit together, one failing write fails alone, and a failed transaction fails them all.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConflictError, NotFoundError, asProjectId, openSqlite, WriteRetry, type Collection } from '@plinth/shared';
import { SqliteRecordStore } from '../src/store/sqlite/sqlite-record-store';
import { SqliteWriteBatch } from '../src/store/sqlite/sqlite-write-batch';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-write-batch-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const p = asProjectId('batch-test');
const c: Collection = { name: 'c', fields: { email: { type: 'text', unique: true } }, rules: {}, revision: 1, created_at: '', updated_at: '' };
const rec = (id: string, email: string) => ({ id, version: 1, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', email });

/** Counts the commits a batch makes: each goes through WriteRetry.once (run when closing); tries that found the lock taken are not commits. */
class CountingRetry extends WriteRetry {
  commits = 0;
  override once<T>(write: () => T): T {
    const value = super.once(write);
    this.commits++;
    return value;
  }
  override run<T>(write: () => T): T {
    const value = super.run(write);
    this.commits++;
    return value;
  }
}

it('the writes of one turn are one commit; writes in later turns are commits of their own', async () => {
  const db = openSqlite(path.join(dir, 'records.db'));
  db.exec('CREATE TABLE t (v INTEGER)');
  const retry = new CountingRetry(db);
  const batch = new SqliteWriteBatch(db, retry);
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
  await Promise.all([1, 2, 3, 4].map((v) => batch.run(() => insert.run(v))));
  expect(retry.commits).toBe(1);
  await batch.run(() => insert.run(5));
  await batch.run(() => insert.run(6));
  expect(retry.commits).toBe(3);
  expect(db.prepare('SELECT v FROM t ORDER BY rowid').pluck().all()).toEqual([1, 2, 3, 4, 5, 6]);
  db.close();
});

it('writes asked for in one turn commit together, in order; a unique violation fails that write alone', async () => {
  const file = path.join(dir, 'records.db');
  const store = SqliteRecordStore.open(file);
  await store.createCollection(p, c);
  const results = await Promise.allSettled([
    store.insertRecord(p, c, rec('a', 'a@example.com')),
    store.insertRecord(p, c, rec('b', 'a@example.com')),
    store.insertRecord(p, c, rec('c', 'c@example.com')),
    store.replaceRecord(p, c, { ...rec('a', 'a2@example.com'), version: 2 }, 1),
    store.replaceRecord(p, c, { ...rec('c', 'c2@example.com'), version: 2 }, 7),
  ]);
  expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
  expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(ConflictError);
  expect((results[3] as PromiseFulfilledResult<unknown>).value).toMatchObject({ id: 'a', version: 2 });
  expect((results[4] as PromiseFulfilledResult<unknown>).value).toBeNull(); // stale version
  const all = await store.queryRecords(p, c, { predicate: true, orderBy: 'id', direction: 'asc', limit: 10 });
  expect(all.map((r) => [r.id, r.version, r.email])).toEqual([
    ['a', 2, 'a2@example.com'],
    ['c', 1, 'c@example.com'],
  ]);
  await store.close();
});

it('a write to a dropped collection fails with 404 alone', async () => {
  const store = SqliteRecordStore.open(path.join(dir, 'records.db'));
  await store.createCollection(p, c);
  const gone: Collection = { ...c, name: 'gone' };
  const results = await Promise.allSettled([store.insertRecord(p, gone, rec('x', 'x@example.com')), store.insertRecord(p, c, rec('y', 'y@example.com'))]);
  expect((results[0] as PromiseRejectedResult).reason).toBeInstanceOf(NotFoundError);
  expect(results[1]!.status).toBe('fulfilled');
  expect(await store.getRecord(p, c, 'y')).toMatchObject({ id: 'y' });
  await store.close();
});

it('when the transaction cannot start, every write of the batch fails and none is written', async () => {
  const file = path.join(dir, 'records.db');
  const db = openSqlite(file);
  db.exec('CREATE TABLE t (v INTEGER)');
  const batch = new SqliteWriteBatch(db, new WriteRetry(db, 200));
  // Another connection holds the write lock past the retry budget.
  const holder = openSqlite(file);
  holder.exec('BEGIN IMMEDIATE');
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
  const results = await Promise.allSettled([batch.run(() => insert.run(1)), batch.run(() => insert.run(2))]);
  holder.exec('ROLLBACK');
  expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  expect(((results[0] as PromiseRejectedResult).reason as { code: string }).code).toMatch(/^SQLITE_BUSY/);
  expect(db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(0);
  // The lock is free again: the next batch commits.
  await Promise.all([batch.run(() => insert.run(3)), batch.run(() => insert.run(4))]);
  expect(db.prepare('SELECT v FROM t ORDER BY v').pluck().all()).toEqual([3, 4]);
  holder.close();
  db.close();
});

it('while another process holds the write lock, the worker keeps running and the writes commit after, in order', async () => {
  const file = path.join(dir, 'records.db');
  const db = openSqlite(file);
  db.exec('CREATE TABLE t (v INTEGER)');
  const retry = new CountingRetry(db);
  const batch = new SqliteWriteBatch(db, retry);
  const holder = openSqlite(file);
  holder.exec('BEGIN IMMEDIATE');
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
  let ticks = 0;
  const ticking = setInterval(() => ticks++, 5);
  const early = [batch.run(() => insert.run(1)), batch.run(() => insert.run(2))];
  // Only a running event loop gets here: the lock is released from a timer.
  await new Promise((resolve) => setTimeout(resolve, 100));
  const late = batch.run(() => insert.run(3));
  // The 5 ms interval ran during the wait. (After a blocking wait it would have run once: a
  // timer that is due runs once when the loop is free again. Under a loaded machine it may run
  // far fewer than 20 times.)
  const ticksWhileLocked = ticks;
  holder.exec('ROLLBACK');
  await Promise.all([...early, late]);
  clearInterval(ticking);
  expect(ticksWhileLocked).toBeGreaterThanOrEqual(2);
  expect(db.prepare('SELECT v FROM t ORDER BY rowid').pluck().all()).toEqual([1, 2, 3]);
  // The write asked for while the others waited went with them: one commit for the three.
  expect(retry.commits).toBe(1);
  const before = retry.commits;
  await batch.run(() => insert.run(4));
  expect(retry.commits).toBe(before + 1);
  holder.close();
  db.close();
});
