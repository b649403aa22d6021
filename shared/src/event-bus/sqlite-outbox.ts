import { randomBytes } from 'node:crypto';
import type { Statement } from 'better-sqlite3';
import type { SqliteDatabase } from '../sqlite';
import type { ChangeEventInput } from './event-bus';

/**
 * The SQLite outbox (docs/architecture.md "The outbox"): the change-event log lives in the
 * records database itself, in the `events` table, so a write and its event commit in one
 * transaction. `appendEvent` is the one function every write path calls inside its own
 * transaction (create, update, delete, collection changes, imports, batches); the event's seq
 * is the table's AUTOINCREMENT key, assigned by the commit, so seq order is commit order.
 *
 * Each row also records its predecessors, so a reader can prove it missed nothing:
 * `prev` the seq assigned just before it in the whole log, `cprev` the seq of the previous
 * event of the same project and collection still in the log (0 when none).
 *
 * `event_log` holds the log's epoch: a random id made when the table is created. A position
 * (seq) only means something together with its epoch; a log made anew (data directory replaced,
 * restored from elsewhere) has another epoch, and readers holding an old position resync.
 */

/** Creates the outbox tables (or brings an older event log up to date). Idempotent. */
export function migrateEventLog(db: SqliteDatabase): void {
  db.transaction(() => {
    db.exec(`
      CREATE TABLE IF NOT EXISTS events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        project TEXT NOT NULL,
        collection TEXT NOT NULL DEFAULT '',
        committed_at INTEGER NOT NULL,
        payload TEXT NOT NULL,
        prev INTEGER NOT NULL DEFAULT 0,
        cprev INTEGER NOT NULL DEFAULT 0
      );
      CREATE TABLE IF NOT EXISTS purges (
        project TEXT PRIMARY KEY,
        through INTEGER NOT NULL
      );
      CREATE TABLE IF NOT EXISTS event_log (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        epoch TEXT NOT NULL
      );
      CREATE TABLE IF NOT EXISTS outbox_cursors (
        consumer TEXT PRIMARY KEY,
        position INTEGER NOT NULL,
        epoch TEXT NOT NULL
      );
    `);
    const columns = new Set((db.prepare('PRAGMA table_info(events)').all() as { name: string }[]).map((c) => c.name));
    if (!columns.has('collection')) {
      db.exec(`
        ALTER TABLE events ADD COLUMN collection TEXT NOT NULL DEFAULT '';
        UPDATE events SET collection = coalesce(json_extract(payload, '$.collection'), '');
      `);
    }
    // Rows written before predecessors were recorded: 0 (unknown) is never checked against.
    if (!columns.has('prev')) db.exec('ALTER TABLE events ADD COLUMN prev INTEGER NOT NULL DEFAULT 0');
    if (!columns.has('cprev')) db.exec('ALTER TABLE events ADD COLUMN cprev INTEGER NOT NULL DEFAULT 0');
    db.exec(`
      CREATE INDEX IF NOT EXISTS events_collection_seq ON events (project, collection, seq);
      DROP INDEX IF EXISTS events_project_seq;
    `);
    db.prepare('INSERT OR IGNORE INTO event_log (id, epoch) VALUES (1, ?)').run(randomBytes(8).toString('hex'));
  }).immediate();
}

/** The log's epoch (see above). */
export function eventLogEpoch(db: SqliteDatabase): string {
  return (db.prepare('SELECT epoch FROM event_log WHERE id = 1').get() as { epoch: string }).epoch;
}

interface OutboxStatements {
  last: Statement<[], { seq: number } | undefined>;
  collectionLast: Statement<[string, string], { seq: number | null }>;
  insert: Statement<[string, string, number, string, number, number]>;
}

const statements = new WeakMap<SqliteDatabase, OutboxStatements>();

function prepared(db: SqliteDatabase): OutboxStatements {
  let s = statements.get(db);
  if (!s) {
    s = {
      last: db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'events'"),
      collectionLast: db.prepare('SELECT max(seq) AS seq FROM events WHERE project = ? AND collection = ?'),
      insert: db.prepare('INSERT INTO events (project, collection, committed_at, payload, prev, cprev) VALUES (?, ?, ?, ?, ?, ?)'),
    };
    statements.set(db, s);
  }
  return s;
}

/**
 * Appends `event` to the outbox of `db`. Call it INSIDE the transaction of the write the event
 * describes (the write and the event commit together or not at all). Returns its seq. Two index
 * lookups and one insert.
 */
export function appendEvent(db: SqliteDatabase, event: ChangeEventInput): number {
  if (!db.inTransaction) throw new Error('appendEvent must run inside the write transaction');
  const s = prepared(db);
  const prev = s.last.get()?.seq ?? 0;
  const cprev = s.collectionLast.get(event.project, event.collection)?.seq ?? 0;
  return Number(s.insert.run(event.project, event.collection, event.committed_at, JSON.stringify(event), prev, cprev).lastInsertRowid);
}

/**
 * Gives the log a new epoch (a restored backup: positions handed out after the backup was taken
 * would otherwise be handed out again for other events). Readers holding a position resync.
 */
export function renewEventLogEpoch(db: SqliteDatabase): string {
  const epoch = randomBytes(8).toString('hex');
  db.prepare('INSERT INTO event_log (id, epoch) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET epoch = excluded.epoch').run(epoch);
  return epoch;
}
