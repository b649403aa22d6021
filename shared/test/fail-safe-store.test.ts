import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Options } from 'express-rate-limit';
import { DependencyBreaker, FailSafeStore, SqliteRateLimitStore, openSqlite, type SqliteDatabase } from '@plinth/shared';

/**
 * Counters that fail safe, not shut: a `limits.db` that refuses writes (here: `PRAGMA
 * query_only`, SQLite's own refusal) leaves the counting to memory instead of failing every hit,
 * and the file takes over again once it can be written.
 */
let dir: string;
let db: SqliteDatabase;
let now: number;
let sqlite: SqliteRateLimitStore;
let store: FailSafeStore;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-failsafe-'));
  db = openSqlite(path.join(dir, 'limits.db'));
  now = 1_000_000;
  sqlite = new SqliteRateLimitStore(db, 'test:');
  store = new FailSafeStore(sqlite, new DependencyBreaker({ retryMs: 2000, now: () => now }));
  store.init({ windowMs: 60_000 } as Options);
});

afterEach(async () => {
  await store.shutdown();
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const stored = (key: string): number | undefined =>
  (db.prepare('SELECT hits FROM rate_limits WHERE key = ?').get(`test:${key}`) as { hits: number } | undefined)?.hits;

it('counts in memory while the file refuses writes, and in the file again once it takes them', async () => {
  expect((await store.increment('a')).totalHits).toBe(1);
  expect(stored('a')).toBe(1);

  db.pragma('query_only = ON');
  // Every hit is still counted (none throws): in this process's memory, from zero.
  const whileRefused: number[] = [];
  for (let i = 0; i < 5; i++) whileRefused.push((await store.increment('a')).totalHits);
  expect(whileRefused).toEqual([1, 2, 3, 4, 5]);
  expect(stored('a')).toBe(1);

  db.pragma('query_only = OFF');
  // The file is not tried again until the breaker's pause is over…
  expect((await store.increment('a')).totalHits).toBe(6);
  expect(stored('a')).toBe(1);
  // …then it is, and counts on from what it holds.
  now += 2001;
  expect((await store.increment('a')).totalHits).toBe(2);
  expect(stored('a')).toBe(2);
});
