/**
 * Group commit for the record store's one-statement writes (create, update, delete). Each commit
 * writes every page it changed to the WAL, and a record write changes several (the row, its
 * primary key, the created_at / updated_at indexes, one or two per indexed field): one commit
 * for the writes of a burst instead of one each measured about a third of the cost per write at
 * eight writes, and takes the write lock that the workers share once per burst.
 *
 * The writes asked for during one turn of the event loop run just after it (setImmediate), in
 * the order asked, in one immediate transaction, each inside its own savepoint: a write that
 * fails (a unique violation, a table dropped meanwhile) is undone and fails alone, the others
 * commit. Every promise settles after the commit — nothing is acknowledged before it is durable
 * as far as the connection's `synchronous` setting makes it. If the transaction itself fails
 * (the disk is full, the lock stays taken), every write of the batch fails with that error. A
 * batch of one write runs as that statement alone, as it did before batching.
 *
 * Another worker may hold the file's write lock. Waiting for it blocking (SQLite's busy handler,
 * or a sleep between tries) stops the whole worker, reads included, until the other worker's
 * commit is done. Here the worker goes on serving requests between tries, and what they write
 * joins the waiting commit.
 */
import { isBusy, LATER, LockWait, type SqliteDatabase, type WriteRetry } from '@plinth/shared';

interface Queued {
  write: () => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export class SqliteWriteBatch {
  private queued: Queued[] = [];
  /** Runs one write in a savepoint (better-sqlite3 nests transactions as savepoints). */
  private readonly inSavepoint: (write: () => unknown) => unknown;
  private readonly lock: LockWait;

  constructor(
    private readonly db: SqliteDatabase,
    retry: WriteRetry,
  ) {
    this.inSavepoint = db.transaction((write: () => unknown) => write());
    this.lock = new LockWait(retry);
  }

  /** Runs `write` (one statement, synchronous) in the next group commit; its result once committed. */
  run<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queued.push({ write, resolve: resolve as (value: unknown) => void, reject });
      if (this.queued.length === 1) setImmediate(() => this.flush());
    });
  }

  /**
   * Commits what is queued now. When another process holds the write lock, the writes stay
   * queued, first in line, and the commit is tried again a millisecond later (LockWait): the
   * event loop keeps serving meanwhile, and the writes asked for in between join the same commit.
   * After the retry budget (WriteRetry's `timeoutMs`) the writes fail with SQLITE_BUSY. `wait`
   * (the store closing): wait for the lock here instead, blocking, within the same budget.
   */
  flush(wait = false): void {
    const batch = this.queued;
    if (batch.length === 0) return;
    this.queued = [];
    let outcomes: Outcome[] | typeof LATER;
    try {
      outcomes = this.lock.commit(() => this.commit(batch), () => this.flush(), wait);
    } catch (err) {
      for (const q of batch) q.reject(err);
      return;
    }
    if (outcomes === LATER) {
      this.queued = batch.concat(this.queued);
      return;
    }
    const committed = outcomes;
    batch.forEach((q, i) => {
      const outcome = committed[i] as Outcome;
      if (outcome.ok) q.resolve(outcome.value);
      else q.reject(outcome.error);
    });
  }

  /**
   * The outcome of each write, committed; throws when the commit itself failed (nothing written),
   * SQLITE_BUSY included. A batch of one write runs in a transaction of its own.
   */
  private commit(batch: Queued[]): Outcome[] {
    if (batch.length === 1) {
      try {
        // In a transaction even alone: a write and the change event it appends (the outbox) commit together.
        return [{ ok: true, value: this.db.transaction(() => (batch[0] as Queued).write()).immediate() }];
      } catch (error) {
        if (isBusy(error)) throw error;
        return [{ ok: false, error }];
      }
    }
    return this.db.transaction(() => batch.map((q) => this.attempt(q.write))).immediate();
  }

  private attempt(write: () => unknown): Outcome {
    try {
      return { ok: true, value: this.inSavepoint(write) };
    } catch (error) {
      // Some errors (a full disk, I/O) make SQLite roll the whole transaction back: then nothing
      // of the batch is written, and the batch fails as a whole.
      if (!this.db.inTransaction) throw error;
      return { ok: false, error };
    }
  }
}
