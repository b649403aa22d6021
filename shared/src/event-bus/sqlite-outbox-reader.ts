import type { SqliteDatabase } from '../sqlite';
import type { ChangeEvent, ChangeEventInput } from './event-bus';
import { eventLogEpoch, migrateEventLog } from './sqlite-outbox';

/** One batch of the outbox, after a consumer's cursor. */
export interface OutboxBatch {
  /** Events in seq (commit) order, every project and collection; purge markers left out. */
  events: ChangeEvent[];
  /** The seq to `commit` once these events are handled (the last row read; unchanged when none). */
  next: number;
  /**
   * True when rows after the cursor are gone (trimmed before this consumer read them, or the
   * log was made anew: another epoch): the consumer must reconcile from the records themselves.
   */
  lost: boolean;
}

/**
 * A consumer of the SQLite outbox with a durable cursor of its own (docs/architecture.md "The
 * outbox"): realtime tails the log, and any other consumer (e.g. webhooks) reads it with a
 * `OutboxReader`: `read` the events after its cursor, handle them, `commit` the position. The
 * cursor is a row of `outbox_cursors` in the same database, so a consumer that commits in the
 * same transaction as its own effects (or idempotently) never skips a row after a crash.
 * Retention still applies: a consumer that falls behind it is told `lost`.
 */
export class SqliteOutboxReader {
  constructor(
    private readonly db: SqliteDatabase,
    /** The consumer's name: its cursor's key. */
    readonly consumer: string,
  ) {
    migrateEventLog(db);
  }

  /** The committed cursor: `{ seq, epoch }` (seq 0 and this log's epoch for a new consumer). */
  position(): { seq: number; epoch: string } {
    const row = this.db.prepare('SELECT position, epoch FROM outbox_cursors WHERE consumer = ?').get(this.consumer) as
      | { position: number; epoch: string }
      | undefined;
    return row ? { seq: row.position, epoch: row.epoch } : { seq: 0, epoch: eventLogEpoch(this.db) };
  }

  /**
   * Up to `limit` events after the cursor, in one read transaction, stopping after the event at
   * which their payloads reach `maxBytes` (at least one): a batch of large records stays small.
   */
  read(limit = 1000, maxBytes = 4 * 1024 * 1024): OutboxBatch {
    return this.db.transaction((): OutboxBatch => {
      const { seq, epoch } = this.position();
      const current = eventLogEpoch(this.db);
      const rows: Array<{ seq: number; prev: number; collection: string; payload: string }> = [];
      let bytes = 0;
      for (const row of this.db.prepare('SELECT seq, prev, collection, payload FROM events WHERE seq > ? ORDER BY seq LIMIT ?').iterate(seq, limit)) {
        const r = row as { seq: number; prev: number; collection: string; payload: string };
        rows.push(r);
        bytes += r.payload.length;
        if (bytes >= maxBytes) break;
      }
      const first = rows[0];
      const lost = epoch !== current || (first !== undefined && first.prev > 0 && first.prev !== seq) || rows.some((r, i) => i > 0 && r.prev > 0 && r.prev !== rows[i - 1]!.seq);
      const events = rows.filter((r) => r.collection !== '').map((r) => ({ ...(JSON.parse(r.payload) as ChangeEventInput), seq: r.seq }));
      return { events, next: rows.length > 0 ? rows[rows.length - 1]!.seq : seq, lost };
    })();
  }

  /** Saves the cursor (durable once this returns), with the log's current epoch. */
  commit(seq: number): void {
    this.db
      .prepare('INSERT INTO outbox_cursors (consumer, position, epoch) VALUES (?, ?, ?) ON CONFLICT (consumer) DO UPDATE SET position = excluded.position, epoch = excluded.epoch')
      .run(this.consumer, seq, eventLogEpoch(this.db));
  }
}
