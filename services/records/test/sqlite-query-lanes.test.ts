/**
 * Admission of SQLite queries to the reader threads (sqlite-query-lanes.ts), through the store:
 * refusals at once when a caller's queue is full, waiting queries dropped when their client goes,
 * queue time counted against the budget, and a cheap query of another caller not waiting behind
 * heavy ones. Ordering and status, not speed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { OverloadedError, PlinthError, UnavailableError, asProjectId, type Collection, type Predicate } from '@plinth/shared';
import { SqliteRecordStore } from '../src/store/sqlite/sqlite-record-store';
import type { RecordQuery } from '../src/store/record-store';

const p = asProjectId('lanes-test');
const c: Collection = { name: 'c', fields: { tags: { type: 'list' }, rank: { type: 'number' } }, rules: {}, revision: 1, created_at: '', updated_at: '' };
let dir: string;
let store: SqliteRecordStore;

/** 29 conditions that each read a whole 10,000-item list of every row before the last one fails. */
const HEAVY: Predicate = { and: [...Array.from({ length: 29 }, (_, j): Predicate => ['tags', 'array-contains', `common-${j}`]), ['tags', 'array-contains', 'absent']] };
/** Every row matches and the order (`rank`, never set) has no index: every list is read 29 times, then sorted. */
const SLOWEST: Partial<RecordQuery> = { predicate: { and: Array.from({ length: 29 }, (_, j): Predicate => ['tags', 'array-contains', `common-${j}`]) }, orderBy: 'rank' };
const query = (predicate: Predicate, extra: Partial<RecordQuery> = {}): RecordQuery => ({ predicate, orderBy: 'created_at', direction: 'asc', limit: 10, timeoutMs: 20_000, ...extra });

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-lanes-'));
  store = SqliteRecordStore.open(path.join(dir, 'records.db'), { readers: 1, admission: { maxQueued: 8, maxWaitMs: 10_000 } });
  await store.createCollection(p, c);
  for (let i = 0; i < 100; i++) {
    const at = `2026-01-01T00:00:${String(i).padStart(2, '0')}.000Z`;
    const tags = Array.from({ length: 10_000 }, (_, k) => (k >= 9971 ? `common-${k - 9971}` : `t${i}-${k}`));
    await store.insertRecord(p, c, { id: `r${String(i).padStart(2, '0')}`, version: 1, created_at: at, updated_at: at, tags });
  }
}, 60_000);
afterAll(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

it("refuses at once (503 overloaded, Retry-After) a query past its caller's share of the queue; the others are answered", async () => {
  const heavy = { id: 'user:heavy' };
  // One caller may queue half of 8 on the light lane and two turns of its own on the heavy one.
  const sent = Array.from({ length: 6 }, () => store.queryRecords(p, c, query(HEAVY, { client: heavy })).then(() => 'answered', (e: unknown) => e));
  const settled = await Promise.all(sent);
  const refused = settled.filter((s) => s instanceof OverloadedError) as OverloadedError[];
  expect(refused.length).toBeGreaterThan(0);
  expect(settled.filter((s) => s === 'answered').length).toBeGreaterThan(0);
  expect(settled.every((s) => s === 'answered' || s instanceof OverloadedError)).toBe(true);
  expect(refused[0]!.status).toBe(503);
  expect(refused[0]!.toEnvelope()).toMatchObject({ error: 'overloaded', details: { retry_after: 1 } });
  expect(refused[0]!.headers).toEqual({ 'Retry-After': '1' });
}, 60_000);

it("answers another caller's cheap query while one caller's heavy queries run, before them", async () => {
  const finished: string[] = [];
  const heavy = [1, 2].map((i) => store.queryRecords(p, c, query(HEAVY, { client: { id: 'user:heavy' } })).then(() => finished.push(`heavy${i}`)));
  // A free reader starts a query in the same turn: both heavy ones are under way after a few
  // milliseconds, and each takes far longer than that (a fixed 100 ms here let a fast machine
  // finish the first one before the cheap query was even sent).
  await new Promise((r) => setTimeout(r, 10));
  expect(finished).toEqual([]);
  const cheap = await store.queryRecords(p, c, query(true, { limit: 2, client: { id: 'user:other' } }));
  finished.push('cheap');
  await Promise.all(heavy);
  expect(cheap.map((r) => r.id)).toEqual(['r00', 'r01']);
  expect(finished[0]).toBe('cheap');
}, 60_000);

it('drops a waiting query when its client goes, and counts the wait against the time budget', async () => {
  const heavy = { id: 'user:heavy' };
  const first = store.queryRecords(p, c, query(HEAVY, { ...SLOWEST, client: heavy }));
  // By then the first has outrun its light slice and runs on the heavy lane.
  await new Promise((r) => setTimeout(r, 150));
  // Same caller: it waits behind the first on the heavy lane (one thread for one caller).
  const gone = new AbortController();
  const waiting = store.queryRecords(p, c, query(HEAVY, { ...SLOWEST, client: { id: 'user:heavy', signal: gone.signal } })).catch((e: unknown) => e);
  const short = store.queryRecords(p, c, query(HEAVY, { ...SLOWEST, client: heavy, timeoutMs: 60 })).catch((e: unknown) => e);
  await new Promise((r) => setTimeout(r, 100));
  gone.abort();
  let firstDone = false;
  void first.then(() => (firstDone = true));
  expect(await waiting).toBeInstanceOf(UnavailableError);
  // Refused within its own 60 ms budget, queue time included, not after the first query.
  const late = (await short) as PlinthError;
  expect(late).toBeInstanceOf(PlinthError);
  expect(['overloaded', 'unavailable']).toContain(late.code);
  expect(firstDone).toBe(false);
  await first;
}, 60_000);

// Last: it stops the store's admission for good.
it('at shutdown (stopAdmission) refuses the queries still waiting and new ones with 503; the running one finishes', async () => {
  const running = store.queryRecords(p, c, query(HEAVY, { ...SLOWEST, client: { id: 'user:a' } }));
  await new Promise((r) => setTimeout(r, 150));
  // Same caller: it waits for the one heavy-lane thread that caller may use.
  const waiting = store.queryRecords(p, c, query(HEAVY, { ...SLOWEST, client: { id: 'user:a' } })).catch((e: unknown) => e);
  await new Promise((r) => setTimeout(r, 50));
  store.stopAdmission();
  const refused = (await waiting) as PlinthError;
  expect(refused).toBeInstanceOf(PlinthError);
  expect(refused.status).toBe(503);
  const late = (await store.queryRecords(p, c, query(true, { limit: 1, client: { id: 'user:b' } })).catch((e: unknown) => e)) as PlinthError;
  expect(late.status).toBe(503);
  await expect(running).resolves.toHaveLength(10);
}, 60_000);
