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

function open(localBatch: number, flushMs = 20, limit?: number): SqliteRateLimitStore {
  const db = openSqlite(path.join(dir, 'limits.db'));
  dbs.push(db);
  const store = new SqliteRateLimitStore(db, 'test:', { localBatch, flushMs, limit });
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

it('a key already over its limit is written by the timer only, not at every batch', async () => {
  const a = open(2, 30, 3);
  // 1 at once, then batches of 2: 3, then 5 (over the limit of 3).
  for (let i = 1; i <= 5; i++) expect(a.increment('k').totalHits).toBe(i);
  expect(stored('k')).toBe(5);
  // Refused hits go on being counted, and written together within flushMs.
  for (let i = 6; i <= 11; i++) expect(a.increment('k').totalHits).toBe(i);
  expect(stored('k')).toBe(5);
  await sleep(80);
  expect(stored('k')).toBe(11);
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

it('ended windows are deleted in steps, at most once a minute, live counters kept, hits answered meanwhile', async () => {
  const a = open(0);
  const db = dbs[0]!;
  // 2,500 counters whose window has ended and 300 live ones, of this and other limiters.
  const put = db.prepare('INSERT INTO rate_limits (key, hits, reset_at) VALUES (?, 1, ?)');
  const putEnded = (n: number, label: string) =>
    db.transaction(() => {
      for (let i = 0; i < n; i++) put.run(`${i % 2 ? 'test:' : 'other:'}${label}-${i}`, Date.now() - 1000);
    })();
  putEnded(2500, 'ended');
  db.transaction(() => {
    for (let i = 0; i < 300; i++) put.run(`${i % 2 ? 'test:' : 'other:'}live-${i}`, Date.now() + 60_000);
  })();
  const ended = () => db.prepare('SELECT count(*) FROM rate_limits WHERE reset_at <= ?').pluck().get(Date.now()) as number;
  const rows = () => db.prepare('SELECT count(*) FROM rate_limits').pluck().get() as number;
  const sweepDone = async () => {
    for (let turns = 0; ended() > 0 && turns < 100; turns++) await new Promise((r) => setImmediate(r));
  };

  // The first hit starts a sweep: it is answered after the first step, with ended windows left.
  expect(a.increment('first').totalHits).toBe(1);
  const afterFirstStep = ended();
  expect(afterFirstStep).toBeGreaterThan(0);
  expect(afterFirstStep).toBeLessThan(2500);
  // A hit meanwhile is counted.
  expect(a.increment('meanwhile').totalHits).toBe(1);
  await sweepDone();
  expect(ended()).toBe(0);
  expect(rows()).toBe(300 + 2);
  expect(stored('first')).toBe(1);
  expect(stored('meanwhile')).toBe(1);

  // Within the minute, hits start no other sweep.
  putEnded(10, 'later');
  for (let i = 0; i < 1000; i++) a.increment('busy');
  await new Promise((r) => setImmediate(r));
  expect(ended()).toBe(10);
  // A minute on, every window above has ended, and the next hit sweeps them all.
  const minuteOn = Date.now() + 61_000;
  jest.spyOn(Date, 'now').mockReturnValue(minuteOn);
  try {
    expect(a.increment('next').totalHits).toBe(1);
    await sweepDone();
    expect(db.prepare('SELECT key FROM rate_limits').pluck().all()).toEqual(['test:next']);
  } finally {
    jest.restoreAllMocks();
  }
});
