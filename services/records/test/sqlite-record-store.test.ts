import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { asProjectId, type Collection } from '@plinth/shared';
import { SqliteRecordStore } from '../src/store/sqlite/sqlite-record-store';
import { describeAggregateContract } from './aggregate.contract';
import { describeFieldOptionsContract } from './field-options.contract';
import { describeFileFieldsContract } from './file-fields.contract';
import { describeFieldRemovalContract } from './field-removal.contract';
import { describeRecordStoreContract } from './record-store.contract';

describeRecordStoreContract('sqlite (in memory)', async () => SqliteRecordStore.open(':memory:'));
describeFieldRemovalContract('sqlite (in memory)', async () => SqliteRecordStore.open(':memory:'));
describeAggregateContract('sqlite (in memory)', async () => SqliteRecordStore.open(':memory:'));
describeFieldOptionsContract('sqlite (in memory)', async () => SqliteRecordStore.open(':memory:'));
describeFileFieldsContract('sqlite (in memory)', async () => SqliteRecordStore.open(':memory:'));

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});
/** A records.db in a fresh directory, removed after the file's tests. */
function tempFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-sqlite-store-'));
  dirs.push(dir);
  return path.join(dir, 'records.db');
}

// As a worker of `npm start` runs it: a reader thread, and each query on the event loop first.
describeRecordStoreContract('sqlite (file, a reader thread, 2 ms on the event loop first)', async () =>
  SqliteRecordStore.open(tempFile(), { readers: 1, inlineQueryMs: 2 }),
);
describeAggregateContract('sqlite (file, a reader thread)', async () => SqliteRecordStore.open(tempFile(), { readers: 1 }));

describe('a query that needs more than its slice on the event loop', () => {
  const p = asProjectId('inline-test');
  const c: Collection = { name: 'c', fields: { tags: { type: 'list' } }, rules: {}, revision: 1, created_at: '', updated_at: '' };

  it('is run again on a reader, off the event loop, and answers every row it finds, in order', async () => {
    const store = SqliteRecordStore.open(tempFile(), { readers: 1, inlineQueryMs: 1 });
    await store.createCollection(p, c);
    // Each row holds 5 000 items; the predicate compares each against 50 absent values, so one
    // row takes the query well past 1 ms.
    const tags = Array.from({ length: 5000 }, (_, i) => i);
    for (let i = 0; i < 40; i++) {
      const at = `2026-01-01T00:00:${String(i).padStart(2, '0')}.000Z`;
      await store.insertRecord(p, c, { id: `r${String(i).padStart(2, '0')}`, version: 1, created_at: at, updated_at: at, tags: i % 2 ? [...tags, -7] : tags });
    }
    const absent = Array.from({ length: 50 }, (_, i) => -100 - i);
    const query = { predicate: ['tags', 'array-contains-any', [...absent, -7]] as const, orderBy: 'created_at', direction: 'desc' as const, limit: 30 };
    // Timers fire while the query runs only if it has left the event loop.
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const rows = await store.queryRecords(p, c, { ...query, predicate: [...query.predicate] as never, timeoutMs: 60_000 });
    clearInterval(timer);
    expect(ticks).toBeGreaterThan(5);
    expect(rows.map((r) => r.id)).toEqual(Array.from({ length: 20 }, (_, i) => `r${String(39 - 2 * i).padStart(2, '0')}`));
    await store.close();
  }, 60_000);
});

/** A store in memory with collection `c` of project `project`, and makers of records and key claims. */
async function keyedStore(project: string) {
  const store = SqliteRecordStore.open(':memory:');
  const p = asProjectId(project);
  const c: Collection = { name: 'c', fields: { a: { type: 'text' } }, rules: {}, revision: 1, created_at: '', updated_at: '' };
  await store.createCollection(p, c);
  const rec = (id: string) => ({ id, version: 1, created_at: 'x', updated_at: 'x', a: id });
  const claim = (key: string, now: string, expiresAt: string) => ({ key, fingerprint: 'f', now, expiresAt });
  return { store, p, c, rec, claim };
}

it('deletes expired idempotency keys as new ones arrive', async () => {
  const { store, p, c, rec, claim } = await keyedStore('purge-test');
  await store.insertRecord(p, c, rec('r1'), claim('k1', '2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z'));
  await store.insertRecord(p, c, rec('r2'), claim('k2', '2026-01-01T00:30:00.000Z', '2026-01-02T00:30:00.000Z'));
  expect(store.countIdempotencyKeys()).toBe(2);
  await store.insertRecord(p, c, rec('r3'), claim('k3', '2026-01-02T00:10:00.000Z', '2026-01-03T00:10:00.000Z'));
  expect(store.countIdempotencyKeys()).toBe(2);
  await store.close();
});

it('deletes many expired idempotency keys in steps, after the create that found them is answered', async () => {
  const { store, p, c, rec, claim } = await keyedStore('purge-steps');
  const expired = 2500;
  for (let i = 0; i < expired; i++) {
    await store.insertRecord(p, c, rec(`old${i}`), claim(`k${i}`, '2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z'));
  }
  const day2 = (minute: number) => `2026-01-02T00:${String(minute).padStart(2, '0')}:00.000Z`;
  await store.insertRecord(p, c, rec('new1'), claim('new1', day2(10), '2026-01-03T00:00:00.000Z'));
  // Answered before the purge ended: some expired keys are gone, not all.
  const left = store.countIdempotencyKeys();
  expect(left).toBeGreaterThan(1);
  expect(left).toBeLessThan(expired + 1);
  // A create meanwhile is answered too, and the purge goes on between requests.
  await store.insertRecord(p, c, rec('new2'), claim('new2', day2(11), '2026-01-03T00:00:00.000Z'));
  for (let i = 0; i < 100 && store.countIdempotencyKeys() > 2; i++) await new Promise((resolve) => setImmediate(resolve));
  expect(store.countIdempotencyKeys()).toBe(2);
  // The new keys still replay their records.
  const again = await store.insertRecord(p, c, rec('other'), claim('new1', day2(12), '2026-01-03T00:00:00.000Z'));
  expect(again).toMatchObject({ replayed: true, record: { id: 'new1' } });
  await store.close();
});
