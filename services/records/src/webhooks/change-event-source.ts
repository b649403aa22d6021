import { eventLogEpoch, SqliteOutboxReader, type ChangeEvent, type SqliteDatabase } from '@plinth/shared';

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
 * (docs/webhooks.md "How deliveries are fed"). The SQLite outbox is one; a MongoDB outbox reader
 * can be plugged in by implementing these three members.
 */
export interface ChangeEventSource {
  /** Up to `limit` changes after the committed cursor; the same ones again until `commit`. */
  read(limit: number): Promise<ChangeEventBatch>;
  /** Moves the cursor past a handled batch; durable once resolved. */
  commit(next: number): Promise<void>;
  /** The change's id, stable for as long as the log lives (the same on every read). */
  eventId(event: ChangeEvent): string;
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
  };
}
