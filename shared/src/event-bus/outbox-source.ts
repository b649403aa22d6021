import type { Statement } from 'better-sqlite3';
import { openSqlite, type SqliteDatabase } from '../sqlite';
import { migrateEventLog } from './sqlite-outbox';

/** One row of an outbox, as the relay copies it (docs/architecture.md "The outbox"). */
export interface OutboxRow {
  /** The store-assigned position: only grows, in commit order. */
  seq: number;
  /** The position assigned just before this one in the whole log (0: none, or unknown). */
  prev: number;
  /** The previous row of the same project and collection (0: none). */
  cprev: number;
  project: string;
  /** '' for a project's purge marker. */
  collection: string;
  committed_at: number;
  /** The event (ChangeEventInput) as JSON. */
  payload: string;
}

/**
 * What the relay (outbox-relay.ts) reads: an outbox written in the same transaction as the
 * records, with positions assigned by the store in commit order, so reading `seq > after` in
 * order never passes over a row that commits later.
 */
export interface OutboxSource {
  /** The outbox's epoch: positions only mean something in it. */
  epoch(): Promise<string>;
  /** Rows with seq > `after`, in seq order, at most `limit`. */
  rowsAfter(after: number, limit: number): Promise<OutboxRow[]>;
  /** The oldest retained row (null when the outbox is empty). */
  oldest(): Promise<{ seq: number; prev: number } | null>;
  /** The last position assigned (0 when none). */
  head(): Promise<number>;
  close(): Promise<void>;
}

/** The SQLite outbox (the `events` table of records.db), read through a connection of its own. */
export class SqliteOutboxSource implements OutboxSource {
  private readonly db: SqliteDatabase;
  private readonly owns: boolean;
  private readonly after: Statement<[number, number], OutboxRow>;
  private readonly first: Statement<[], { seq: number; prev: number }>;
  private readonly last: Statement<[], { seq: number }>;
  private readonly epochRow: Statement<[], { epoch: string }>;

  constructor(fileOrDb: string | SqliteDatabase) {
    this.owns = typeof fileOrDb === 'string';
    this.db = typeof fileOrDb === 'string' ? openSqlite(fileOrDb) : fileOrDb;
    migrateEventLog(this.db);
    this.after = this.db.prepare('SELECT seq, prev, cprev, project, collection, committed_at, payload FROM events WHERE seq > ? ORDER BY seq LIMIT ?');
    this.first = this.db.prepare('SELECT seq, prev FROM events ORDER BY seq LIMIT 1');
    this.last = this.db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'events'");
    this.epochRow = this.db.prepare('SELECT epoch FROM event_log WHERE id = 1');
  }

  async epoch(): Promise<string> {
    return this.epochRow.get()!.epoch;
  }

  async rowsAfter(after: number, limit: number): Promise<OutboxRow[]> {
    return this.after.all(after, limit);
  }

  async oldest(): Promise<{ seq: number; prev: number } | null> {
    return this.first.get() ?? null;
  }

  async head(): Promise<number> {
    return this.last.get()?.seq ?? 0;
  }

  async close(): Promise<void> {
    if (this.owns) this.db.close();
  }
}
