/**
 * The SQLite outbox (docs/architecture.md "The outbox"): a write and its change event commit in
 * one transaction of records.db, whatever else happens; the event log reads them back in
 * commit order, and a reader can prove it missed none.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { asProjectId, SqliteEventBus, SqliteOutboxReader, type ChangeEventInput, type Collection, type RecordDoc } from '@plinth/shared';
import { SqliteRecordStore } from '../src/store/sqlite/sqlite-record-store';

const p = asProjectId('outbox-test');
const c: Collection = { name: 'c', fields: { email: { type: 'text', unique: true } }, rules: {}, revision: 1, created_at: '', updated_at: '' };
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function open(): { file: string; store: SqliteRecordStore; bus: SqliteEventBus } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-outbox-'));
  dirs.push(dir);
  const file = path.join(dir, 'records.db');
  const store = SqliteRecordStore.open(file, { outbox: true });
  return { file, store, bus: new SqliteEventBus({ file }) };
}

const rec = (id: string, version: number, email: string): RecordDoc => ({ id, version, created_at: 't', updated_at: 't', email });
const ev = (kind: ChangeEventInput['kind'], record: RecordDoc, previous?: RecordDoc): ChangeEventInput => ({
  project: p,
  collection: 'c',
  kind,
  record,
  ...(previous ? { previous } : {}),
  committed_at: 1,
});

it('each write that happens appends its event in the same transaction; a write that does not happen appends none', async () => {
  const { store, bus } = open();
  await store.createCollection(p, c);
  const a = rec('rec_a', 1, 'a@x');
  await store.insertRecord(p, c, a, undefined, ev('create', a));
  // A unique violation, a lost compare-and-set, a delete of nothing: no record change, no event.
  await expect(store.insertRecord(p, c, rec('rec_b', 1, 'a@x'), undefined, ev('create', rec('rec_b', 1, 'a@x')))).rejects.toThrow();
  expect(await store.replaceRecord(p, c, rec('rec_a', 3, 'z@x'), 2, ev('update', rec('rec_a', 3, 'z@x')))).toBeNull();
  expect(await store.deleteRecord(p, c, 'rec_none', undefined, ev('delete', rec('rec_none', 1, 'n@x')))).toBe(false);
  const a2 = rec('rec_a', 2, 'b@x');
  await store.replaceRecord(p, c, a2, 1, ev('update', a2, a));
  await store.deleteRecord(p, c, 'rec_a', 2, ev('delete', a2, a2));
  // Two creates with the same Idempotency-Key: one record, one event, whichever answer comes first.
  const claim = { key: 'k', fingerprint: 'f', now: new Date(0).toISOString(), expiresAt: new Date(9e12).toISOString() };
  const k = rec('rec_k', 1, 'k@x');
  const [first, again] = await Promise.all([
    store.insertRecord(p, c, k, claim, ev('create', k)),
    store.insertRecord(p, c, rec('rec_k2', 1, 'k@x'), claim, ev('create', rec('rec_k2', 1, 'k@x'))),
  ]);
  expect([first.replayed, again.replayed].sort()).toEqual([false, true]);
  const page = await bus.read(p, 'c', 0);
  expect(page.trimmed).toBe(false);
  expect(page.events.map((e) => `${e.kind}:${e.record!.id}:${e.record!.version}`)).toEqual(['create:rec_a:1', 'update:rec_a:2', 'delete:rec_a:2', 'create:rec_k:1']);
  expect(page.events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
  await store.close();
  await bus.close();
});

it('a write whose event cannot be appended is not stored (one transaction): no record without its event', async () => {
  const { file, store, bus } = open();
  await store.createCollection(p, c);
  await bus.close();
  // Break the outbox from outside: every append now fails.
  const other = new Database(file);
  other.exec('ALTER TABLE events RENAME TO events_gone');
  other.close();
  const a = rec('rec_a', 1, 'a@x');
  await expect(store.insertRecord(p, c, a, undefined, ev('create', a))).rejects.toThrow();
  const claim = { key: 'k', fingerprint: 'f', now: new Date(0).toISOString(), expiresAt: new Date(9e12).toISOString() };
  await expect(store.insertRecord(p, c, a, claim, ev('create', a))).rejects.toThrow();
  expect(await store.getRecord(p, c, 'rec_a')).toBeNull();
  // Nor is the idempotency key: a retry is a fresh create, not a replay without an event.
  const fix = new Database(file);
  fix.exec('ALTER TABLE events_gone RENAME TO events');
  fix.close();
  expect(await store.insertRecord(p, c, a, claim, ev('create', a))).toMatchObject({ replayed: false });
  const reader = new SqliteEventBus({ file });
  expect((await reader.read(p, 'c', 0)).events.map((e) => e.record!.id)).toEqual(['rec_a']);
  await store.close();
  await reader.close();
});

it('the log has an epoch of its own, and a reader sees a gap in a collection’s events (never replays over it)', async () => {
  const { file, store, bus } = open();
  await store.createCollection(p, c);
  for (let i = 1; i <= 4; i++) {
    const r = rec(`rec_${i}`, 1, `${i}@x`);
    await store.insertRecord(p, c, r, undefined, ev('create', r));
  }
  const page = await bus.read(p, 'c', 0);
  expect(page).toMatchObject({ trimmed: false, epoch: await bus.epoch() });
  expect(page.epoch).toMatch(/^[0-9a-f]{16}$/);
  // Another database is another log: another epoch.
  const { bus: elsewhere } = open();
  expect(await elsewhere.epoch()).not.toBe(page.epoch);
  await elsewhere.close();
  // An event removed from the middle (a log that lost it): the read says so.
  const raw = new Database(file);
  raw.prepare('DELETE FROM events WHERE seq = 3').run();
  raw.close();
  expect((await bus.read(p, 'c', 1)).trimmed).toBe(true);
  expect((await bus.read(p, 'c', 3)).trimmed).toBe(false);
  await store.close();
  await bus.close();
});

it('a tail that finds a gap in what it reads reports it, and goes on delivering', async () => {
  const { file, store, bus } = open();
  await store.createCollection(p, c);
  const resets: string[] = [];
  const seen: number[] = [];
  const stop = await bus.tail((events) => seen.push(...events.map((e) => e.seq)), undefined, (reason) => resets.push(reason));
  const raw = new Database(file);
  // Two events appended, the first lost before the tail reads it.
  raw.transaction(() => {
    for (const id of ['rec_1', 'rec_2']) {
      const r = rec(id, 1, `${id}@x`);
      raw.prepare("INSERT INTO events (project, collection, committed_at, payload, prev, cprev) VALUES (?, 'c', 1, ?, (SELECT coalesce(max(seq), 0) FROM events), 0)").run(p, JSON.stringify(ev('create', r)));
    }
    raw.prepare('DELETE FROM events WHERE seq = (SELECT min(seq) FROM events)').run();
  })();
  raw.close();
  bus.poke();
  await new Promise((r) => setTimeout(r, 100));
  expect(resets).toEqual(['gap']);
  expect(seen).toEqual([2]);
  stop();
  await store.close();
  await bus.close();
});

it('another consumer reads the outbox with a durable cursor of its own, and is told when rows were lost before it read them', async () => {
  const { file, store, bus } = open();
  await store.createCollection(p, c);
  const write = async (id: string) => {
    const r = rec(id, 1, `${id}@x`);
    await store.insertRecord(p, c, r, undefined, ev('create', r));
  };
  await write('rec_1');
  await write('rec_2');
  const db = new Database(file);
  const hooks = new SqliteOutboxReader(db, 'webhooks');
  const batch = hooks.read(1);
  expect(batch).toMatchObject({ next: 1, lost: false });
  expect(batch.events.map((e) => e.record!.id)).toEqual(['rec_1']);
  hooks.commit(batch.next);
  // A new reader of the same consumer (after a restart) continues from the committed cursor.
  const again = new SqliteOutboxReader(db, 'webhooks');
  expect(again.read().events.map((e) => e.record!.id)).toEqual(['rec_2']);
  // The realtime tail and trims are not affected by it; a row trimmed before it was read is reported.
  await write('rec_3');
  await write('rec_4');
  db.prepare('DELETE FROM events WHERE seq = 3').run();
  again.commit(2);
  expect(again.read()).toMatchObject({ next: 4, lost: true });
  // A batch stops at the event whose payload reaches the byte bound (at least one event).
  again.commit(0);
  const small = again.read(100, 1);
  expect(small.events.map((e) => e.record!.id)).toEqual(['rec_1']);
  expect(small.next).toBe(1);
  db.close();
  await store.close();
  await bus.close();
});

it('a delete plan (a cascade across records) appends the events of all its writes in its own transaction', async () => {
  const { store, bus } = open();
  await store.createCollection(p, c);
  const a = rec('rec_a', 1, 'a@x');
  const b = rec('rec_b', 1, 'b@x');
  await store.insertRecord(p, c, a, undefined, ev('create', a));
  await store.insertRecord(p, c, b, undefined, ev('create', b));
  const b2 = rec('rec_b', 2, 'b2@x');
  const applied = await store.applyDeletePlan(p, {
    deletes: [{ collection: c, id: 'rec_a', version: 1 }],
    replaces: [{ collection: c, next: b2, version: 1 }],
    guards: [],
    events: [ev('delete', a, a), ev('update', b2, b)],
  });
  expect(applied).toBe(true);
  // A plan whose data moved writes nothing, and appends nothing.
  expect(await store.applyDeletePlan(p, { deletes: [{ collection: c, id: 'rec_b', version: 1 }], replaces: [], guards: [], events: [ev('delete', b, b)] })).toBe(false);
  const page = await bus.read(p, 'c', 0);
  expect(page.events.map((e) => `${e.kind}:${e.record!.id}:${e.record!.version}`)).toEqual(['create:rec_a:1', 'create:rec_b:1', 'delete:rec_a:1', 'update:rec_b:2']);
  await store.close();
  await bus.close();
});
