import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteEventBus, asProjectId, openSqlite, type ChangeEventInput, type ProjectId } from '@plinth/shared';
import { describeEventBusContract } from './event-bus-contract';

describeEventBusContract('SQLite event log', async (retention) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-events-'));
  const file = path.join(dir, 'events.db');
  const bus = new SqliteEventBus({ file, retention, pollMs: 10 });
  return {
    bus,
    reopen: async () => new SqliteEventBus({ file, retention, pollMs: 10 }),
    cleanUp: async () => {
      await bus.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
});

/** Two buses on one fresh log file, as two processes would have them; both closed and removed after `fn`. */
async function withWriterAndReader(fn: (writer: SqliteEventBus, reader: SqliteEventBus, file: string) => Promise<void>): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-events-'));
  const file = path.join(dir, 'events.db');
  const writer = new SqliteEventBus({ file, pollMs: 10 });
  const reader = new SqliteEventBus({ file, pollMs: 10 });
  try {
    await fn(writer, reader, file);
  } finally {
    await writer.close();
    await reader.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A create event of record `id` in collection `c`. */
const created = (project: ProjectId, id: string): ChangeEventInput => ({
  project,
  collection: 'c',
  kind: 'create',
  record: { id, version: 1, created_at: 'x', updated_at: 'x' },
  committed_at: Date.now(),
});

describe('SQLite event log: appends in groups', () => {
  it('events published in one turn of the event loop get consecutive seqs in publish order, seen so by another process', () =>
    withWriterAndReader(async (writer, reader) => {
      const project = asProjectId('grouped');
      const seqs = await Promise.all(Array.from({ length: 50 }, (_, i) => writer.publish(created(project, `r${i}`))));
      expect(seqs).toEqual(Array.from({ length: 50 }, (_, i) => seqs[0]! + i));
      const page = await reader.read(project, 'c', 0);
      expect(page.events.map((e) => [e.seq, e.record?.id])).toEqual(seqs.map((s, i) => [s, `r${i}`]));
    }));

  it('while another process holds the write lock, the publisher keeps running and its events are appended after, in order', () =>
    withWriterAndReader(async (writer, reader, file) => {
      const project = asProjectId('waiting');
      await writer.publish(created(project, 'first')); // the log file exists
      const holder = openSqlite(file);
      holder.exec('BEGIN IMMEDIATE');
      let ticks = 0;
      const ticking = setInterval(() => ticks++, 5);
      const early = [writer.publish(created(project, 'a')), writer.publish(created(project, 'b'))];
      // Only a running event loop gets here: the lock is released from a timer.
      await new Promise((resolve) => setTimeout(resolve, 100));
      const late = writer.publish(created(project, 'c'));
      // The 5 ms interval ran during the wait (after a blocking wait it would have run once).
      const ticksWhileLocked = ticks;
      holder.exec('ROLLBACK');
      holder.close();
      const seqs = await Promise.all([...early, late]);
      clearInterval(ticking);
      expect(ticksWhileLocked).toBeGreaterThanOrEqual(2);
      expect(seqs).toEqual([seqs[0], seqs[0]! + 1, seqs[0]! + 2]);
      const page = await reader.read(project, 'c', 0);
      expect(page.events.map((e) => e.record?.id)).toEqual(['first', 'a', 'b', 'c']);
    }));

  it('an event published just before close is still appended', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-events-'));
    const file = path.join(dir, 'events.db');
    const writer = new SqliteEventBus({ file });
    const project = asProjectId('closing');
    const published = writer.publish({ project, collection: 'c', kind: 'collection', revision: null, committed_at: Date.now() });
    await writer.close();
    await expect(published).resolves.toBeGreaterThan(0);
    const reader = new SqliteEventBus({ file });
    try {
      expect((await reader.read(project, 'c', 0)).events).toHaveLength(1);
    } finally {
      await reader.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('SQLite event log: a tail nobody wants', () => {
  it('skips what is appended while `wanted` is false, then delivers what follows, in order', () =>
    withWriterAndReader(async (writer, reader) => {
      const project = asProjectId('unwanted');
      const publish = (id: string) => writer.publish(created(project, id));
      let wanted = false;
      const seen: string[] = [];
      const stop = await reader.tail((events) => seen.push(...events.map((e) => String(e.record?.id))), () => wanted);
      await publish('skipped-1');
      await publish('skipped-2');
      // Two poll intervals: the tail has looked at the log and moved past both.
      await new Promise((r) => setTimeout(r, 50));
      wanted = true;
      await publish('delivered-1');
      await publish('delivered-2');
      for (let i = 0; i < 100 && seen.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
      expect(seen).toEqual(['delivered-1', 'delivered-2']);
      // The skipped events are still in the log for readers that replay it.
      expect((await reader.read(project, 'c', 0)).events.map((e) => e.record?.id)).toEqual(['skipped-1', 'skipped-2', 'delivered-1', 'delivered-2']);
      stop();
    }));
});

describe('SQLite event log: trimming in steps', () => {
  /** A log holding `n` events of `project`, kept to the newest `maxEvents`. */
  async function fullLog(n: number, maxEvents: number): Promise<{ bus: SqliteEventBus; project: ProjectId; cleanUp: () => Promise<void> }> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-events-'));
    const bus = new SqliteEventBus({ file: path.join(dir, 'events.db'), retention: { maxEvents, maxAgeMs: 3_600_000 } });
    const project = asProjectId('trimmed');
    await Promise.all(Array.from({ length: n }, (_, i) => bus.publish(created(project, `r${i}`))));
    return {
      bus,
      project,
      cleanUp: async () => {
        await bus.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }

  it('an event published while a long trim runs is appended before the trim ends, and the trim keeps exactly the retained events', async () => {
    const log = await fullLog(5000, 100);
    try {
      const order: string[] = [];
      const head = await log.bus.head(log.project);
      const trimmed = log.bus.trim().then(() => order.push('trim done'));
      const published = log.bus.publish(created(log.project, 'during')).then((seq) => {
        order.push('published');
        return seq;
      });
      await Promise.all([trimmed, published]);
      expect(order).toEqual(['published', 'trim done']);
      const page = await log.bus.read(log.project, 'c', head - 100);
      expect(page.trimmed).toBe(false);
      expect(page.events.map((e) => e.record?.id)).toEqual([...Array.from({ length: 100 }, (_, i) => `r${4900 + i}`), 'during']);
      expect((await log.bus.read(log.project, 'c', head - 101)).trimmed).toBe(true);
    } finally {
      await log.cleanUp();
    }
  });

  it('closing the log during a trim ends the trim quietly', async () => {
    const log = await fullLog(5000, 100);
    const trimmed = log.bus.trim();
    await log.cleanUp();
    await expect(trimmed).resolves.toBeUndefined();
  });
});

describe('SQLite event log: a log written before the collection index', () => {
  it('is brought up to date on open: its events are read by collection, new ones follow, through the (project, collection, seq) index', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-events-'));
    const file = path.join(dir, 'events.db');
    const project = asProjectId('old-log');
    const old = openSqlite(file);
    old.exec(`
      CREATE TABLE events (seq INTEGER PRIMARY KEY AUTOINCREMENT, project TEXT NOT NULL, committed_at INTEGER NOT NULL, payload TEXT NOT NULL);
      CREATE INDEX events_project_seq ON events (project, seq);
      CREATE TABLE purges (project TEXT PRIMARY KEY, through INTEGER NOT NULL);
    `);
    const insert = old.prepare('INSERT INTO events (project, committed_at, payload) VALUES (?, ?, ?)');
    for (const [c, id] of [['c', 'old-1'], ['d', 'other'], ['c', 'old-2']] as const) insert.run(project, Date.now(), JSON.stringify({ ...created(project, id), collection: c }));
    old.close();
    const bus = new SqliteEventBus({ file });
    try {
      await bus.publish(created(project, 'new'));
      expect((await bus.read(project, 'c', 0)).events.map((e) => e.record?.id)).toEqual(['old-1', 'old-2', 'new']);
      expect((await bus.read(project, 'd', 0)).events.map((e) => e.record?.id)).toEqual(['other']);
      expect(await bus.countAfter(project, 'c', 0, 10)).toBe(3);
      const db = openSqlite(file);
      const plan = db.prepare("EXPLAIN QUERY PLAN SELECT seq, payload FROM events WHERE project = 'x' AND collection = 'c' AND seq > 0 ORDER BY seq").all() as { detail: string }[];
      const indexes = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events'").all() as { name: string }[]).map((r) => r.name);
      db.close();
      expect(plan.map((r) => r.detail).join(' ')).toContain('events_collection_seq');
      expect(indexes).toEqual(['events_collection_seq']);
    } finally {
      await bus.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
