import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteRateLimitStore, openSqlite, type SqliteDatabase } from '@plinth/shared';

/**
 * The counters standalone workers share through `limits.db`. Two stores on two connections to
 * one file stand for two worker processes.
 */
let dir: string;
let dbs: SqliteDatabase[];
let stores: SqliteRateLimitStore[];

function open(localBatch: number, flushMs = 20): SqliteRateLimitStore {
  const db = openSqlite(path.join(dir, 'limits.db'));
  dbs.push(db);
  const store = new SqliteRateLimitStore(db, 'test:', { localBatch, flushMs });
  store.init({ windowMs: 60_000 });
  stores.push(store);
  return store;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const stored = (key: string): number | undefined => {
  const probe = openSqlite(path.join(dir, 'limits.db'));
  try {
    return (probe.prepare('SELECT hits FROM rate_limits WHERE key = ?').get(`test:${key}`) as { hits: number } | undefined)?.hits;
  } finally {
    probe.close();
  }
};

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-limits-'));
  dbs = [];
  stores = [];
});

afterEach(() => {
  for (const s of stores) s.shutdown();
  for (const db of dbs) db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('without a local batch, every hit is written at once and each process sees the others', () => {
  const a = open(0);
  const b = open(0);
  expect(a.increment('k').totalHits).toBe(1);
  expect(b.increment('k').totalHits).toBe(2);
  expect(a.increment('k').totalHits).toBe(3);
  expect(stored('k')).toBe(3);
});

it('with a local batch, a process writes its hits once it holds that many', () => {
  const a = open(5, 60_000);
  // The first hit of a key is written at once (it reads the shared count and window).
  expect(a.increment('k').totalHits).toBe(1);
  expect(stored('k')).toBe(1);
  for (let i = 2; i <= 5; i++) expect(a.increment('k').totalHits).toBe(i);
  expect(stored('k')).toBe(1);
  // The fifth unwritten hit: all five are written in one go.
  expect(a.increment('k').totalHits).toBe(6);
  expect(stored('k')).toBe(6);
});

it('unwritten hits reach the shared count within flushMs, and another process counts them', async () => {
  const a = open(100, 20);
  const b = open(100, 20);
  for (let i = 0; i < 10; i++) a.increment('k');
  expect(stored('k')).toBe(1);
  await sleep(80);
  expect(stored('k')).toBe(10);
  // b's first hit reads the shared count: a's ten and its own.
  expect(b.increment('k').totalHits).toBe(11);
});

it('two processes together let through at most one batch more than the limit each', async () => {
  const limit = 50;
  const batch = 5;
  const a = open(batch, 60_000);
  const b = open(batch, 60_000);
  let allowed = 0;
  for (let i = 0; i < 200; i++) {
    const store = i % 2 === 0 ? a : b;
    if (store.increment('k').totalHits <= limit) allowed++;
  }
  expect(allowed).toBeGreaterThanOrEqual(limit);
  expect(allowed).toBeLessThanOrEqual(limit + 2 * batch);
});

it('shutdown writes what the process still holds; get and resetKey see and clear it', () => {
  const a = open(100, 60_000);
  for (let i = 0; i < 7; i++) a.increment('k');
  expect(stored('k')).toBe(1);
  expect(a.get('k')?.totalHits).toBe(7);
  expect(stored('k')).toBe(7);
  a.increment('k');
  a.shutdown();
  expect(stored('k')).toBe(8);
  a.resetKey('k');
  expect(stored('k')).toBeUndefined();
  expect(a.increment('k').totalHits).toBe(1);
});

it('a decrement takes back an unwritten hit before it touches the file', () => {
  const a = open(100, 60_000);
  a.increment('k');
  a.increment('k');
  a.decrement('k');
  a.shutdown();
  expect(stored('k')).toBe(1);
});
