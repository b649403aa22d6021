import type { Db } from 'mongodb';
import { eventLogEpoch, MONGO_MAJORITY, SqliteOutboxReader, type ChangeEvent, type ChangeEventInput, type SqliteDatabase } from '@plinth/shared';
import { MongoOutboxSource } from '../store/mongo/mongo-outbox';

/** One read of a change-event source. */
export interface ChangeEventBatch {
  /** Committed changes after the cursor, in commit order. */
  events: ChangeEvent[];
  /** Pass to `commit` once every event of the batch is handled. */
  next: number;
  /** True when changes after the cursor are gone (trimmed before they were read). */
  lost: boolean;
}

/**
 * Where the webhook dispatcher reads committed changes: a log with a durable cursor of its own
 * (docs/webhooks.md "How deliveries are fed"): the SQLite outbox of records.db, or the MongoDB
 * outbox collection of the records' database.
 */
export interface ChangeEventSource {
  /** Up to `limit` changes after the committed cursor; the same ones again until `commit`. */
  read(limit: number): Promise<ChangeEventBatch>;
  /** Moves the cursor past a handled batch; durable once resolved. */
  commit(next: number): Promise<void>;
  /** The change's id, stable for as long as the log lives (the same on every read). */
  eventId(event: ChangeEvent): string;
  /** The position of the last change committed so far (0: none). */
  head(): Promise<number>;
}

/** The SQLite outbox of records.db as a ChangeEventSource (its cursor is a row of records.db). */
export function sqliteChangeSource(db: SqliteDatabase, consumer: string): ChangeEventSource {
  const reader = new SqliteOutboxReader(db, consumer);
  // An id is the log's epoch and the position: unique even when the log is made anew.
  let epoch = eventLogEpoch(db);
  return {
    read: async (limit) => {
      const batch = reader.read(limit);
      epoch = eventLogEpoch(db);
      return batch;
    },
    commit: async (next) => reader.commit(next),
    eventId: (event) => `evt_${epoch}_${event.seq}`,
    head: async () => (db.prepare('SELECT coalesce(max(seq), 0) AS head FROM events').get() as { head: number }).head,
  };
}

/** Where the Mongo source keeps its cursors: one document per consumer. */
export const MONGO_WEBHOOK_CURSORS = 'plinth_webhook_cursors';

interface CursorDocument {
  _id: string;
  position: number;
  epoch: string;
}

/**
 * The MongoDB outbox (`plinth_outbox`, written in each write's transaction) as a
 * ChangeEventSource; its cursor is a document of `plinth_webhook_cursors` in the same database.
 * Positions are gap-free and in commit order (mongo-outbox.ts), so reading after the cursor never
 * passes over a change that commits later; a gap (rows trimmed before they were read) or another
 * epoch is reported as `lost`, as the SQLite reader does.
 */
export function mongoChangeSource(db: Db, consumer: string): ChangeEventSource {
  const outbox = new MongoOutboxSource(db);
  const cursors = db.collection<CursorDocument>(MONGO_WEBHOOK_CURSORS, { writeConcern: MONGO_MAJORITY });
  let epoch = '';
  return {
    read: async (limit) => {
      const current = await outbox.epoch();
      const cursor = await cursors.findOne({ _id: consumer });
      const seq = cursor?.position ?? 0;
      const rows = await outbox.rowsAfter(seq, limit);
      const first = rows[0];
      const lost =
        (cursor !== null && cursor.epoch !== current) ||
        (first !== undefined && first.prev > 0 && first.prev !== seq) ||
        rows.some((r, i) => i > 0 && r.prev > 0 && r.prev !== rows[i - 1]!.seq);
      epoch = current;
      const events = rows.filter((r) => r.collection !== '').map((r) => ({ ...(JSON.parse(r.payload) as ChangeEventInput), seq: r.seq }));
      return { events, next: rows.length > 0 ? rows[rows.length - 1]!.seq : seq, lost };
    },
    commit: async (next) => {
      await cursors.updateOne({ _id: consumer }, { $set: { position: next, epoch: await outbox.epoch() } }, { upsert: true });
    },
    // An id is the outbox's epoch and the position: unique even when the outbox is made anew.
    eventId: (event) => `evt_${epoch}_${event.seq}`,
    head: () => outbox.head(),
  };
}
