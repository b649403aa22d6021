import type { Statement } from 'better-sqlite3';
import { LATER, LockWait, openSqlite, WriteRetry, type SqliteDatabase } from '../sqlite';
import { deleteInSteps } from '../sqlite-cleanup';
import type { ProjectId } from '../types';
import { appendEvent, eventLogEpoch, migrateEventLog } from './sqlite-outbox';
import {
  DEFAULT_EVENT_RETENTION,
  type ChangeEvent,
  type ChangeEventInput,
  type EventBus,
  type EventListener,
  type EventPage,
  type EventRetention,
  type ReadLimits,
  type TailReset,
} from './event-bus';

export interface SqliteEventBusOptions {
  /**
   * The database holding the log (standalone: the records database `${PLINTH_DATA_DIR}/records.db`,
   * whose writes append their events in their own transaction: sqlite-outbox.ts), or `:memory:`.
   */
  file: string;
  retention?: EventRetention;
  /**
   * How often a tail looks for events written by other processes (ms). Events published through
   * this instance wake its tails at once; another process's can through `poke`.
   */
  pollMs?: number;
}

interface Row {
  seq: number;
  payload: string;
  /** The seq assigned before this one (0: unknown, written by an older version). */
  prev: number;
  /** The previous event of the same project and collection (0: none, or unknown). */
  cprev: number;
  collection: string;
}

/**
 * EventBus on a SQLite file in WAL mode: one table, `seq` an AUTOINCREMENT key (never reused,
 * so it only grows). Several processes open the same file; each tails it by polling `seq > last`
 * every `pollMs` (a cheap index range scan), and wakes its own tails immediately on publish.
 * `seq` is one sequence for every project. A purge records its point per project in `purges`
 * (one row per deleted project id, kept for good).
 */
export class SqliteEventBus implements EventBus {
  private readonly db: SqliteDatabase;
  private readonly retention: EventRetention;
  private readonly pollMs: number;
  private readonly lock: LockWait;
  private readonly after: Statement<[number, number], Row>;
  private readonly collectionAfter: Statement<[string, string, number], Row>;
  private readonly countCollectionAfter: Statement<[string, string, number, number], { n: number }>;
  private readonly first: Statement<[], { seq: number | null }>;
  private readonly last: Statement<[], { seq: number } | undefined>;
  private readonly purgePoint: Statement<[string], { through: number } | undefined>;
  private readonly trimOldest: Statement<[number, number, number]>;
  /** The trim under way (one at a time), and whether close() was called. */
  private trimming: Promise<void> | null = null;
  private closed = false;
  private readonly tails = new Set<{ listener: EventListener; wanted?: () => boolean; onReset?: TailReset; position: number }>();
  private readonly epochId: string;
  private timer: NodeJS.Timeout | null = null;
  private wakeScheduled = false;
  /** Called after each committed append (standalone workers tell the others; see `poke`). */
  /** Who hears of each group appended: the other workers' wake-up, webhooks (each adds its own). */
  private readonly appended: Array<() => void> = [];
  /** Published, not yet appended (see publish). */
  private readonly queued: Array<{ event: ChangeEventInput; resolve: (seq: number) => void; reject: (err: unknown) => void }> = [];

  constructor(opts: SqliteEventBusOptions) {
    this.db = openSqlite(opts.file);
    this.retention = opts.retention ?? DEFAULT_EVENT_RETENTION;
    this.pollMs = opts.pollMs ?? 20;
    migrateEventLog(this.db);
    this.lock = new LockWait(new WriteRetry(this.db));
    this.epochId = eventLogEpoch(this.db);
    this.after = this.db.prepare('SELECT seq, payload, prev, cprev, collection FROM events WHERE seq > ? ORDER BY seq LIMIT ?');
    this.collectionAfter = this.db.prepare('SELECT seq, payload, prev, cprev, collection FROM events WHERE project = ? AND collection = ? AND seq > ? ORDER BY seq');
    // Counts index entries only (the index covers seq): no payload is read.
    this.countCollectionAfter = this.db.prepare(
      'SELECT count(*) AS n FROM (SELECT 1 FROM events WHERE project = ? AND collection = ? AND seq > ? LIMIT ?)',
    );
    this.first = this.db.prepare('SELECT min(seq) AS seq FROM events');
    this.last = this.db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'events'");
    this.purgePoint = this.db.prepare('SELECT through FROM purges WHERE project = ?');
    this.trimOldest = this.db.prepare(
      'DELETE FROM events WHERE seq IN (SELECT seq FROM events ORDER BY seq LIMIT ?) AND (seq <= ? OR committed_at < ?)',
    );
  }

  private lastAssigned(): number {
    return this.last.get()?.seq ?? 0;
  }

  /**
   * Appends in groups: the events published during one turn of the event loop are written in one
   * immediate transaction just after it (setImmediate), in the order they were published, and
   * each promise resolves with its seq once that transaction has committed. One commit per
   * burst instead of one per write: under load, the log's write lock is taken far less often.
   */
  publish(event: ChangeEventInput): Promise<number> {
    return new Promise((resolve, reject) => {
      this.queued.push({ event, resolve, reject });
      if (this.queued.length === 1) setImmediate(() => this.appendQueued());
    });
  }

  /**
   * While another worker holds the log's write lock, the events stay queued, first in line, and
   * the append is tried again a millisecond later (LockWait) instead of blocking this worker.
   */
  private appendQueued(wait = false): void {
    const batch = this.queued.splice(0);
    if (batch.length === 0) return;
    let seqs: number[] | typeof LATER;
    try {
      seqs = this.lock.commit(
        () => this.db.transaction(() => batch.map((e) => appendEvent(this.db, e.event))).immediate(),
        () => this.appendQueued(),
        wait,
      );
    } catch (err) {
      for (const e of batch) e.reject(err);
      return;
    }
    if (seqs === LATER) {
      this.queued.unshift(...batch);
      return;
    }
    const assigned = seqs;
    batch.forEach((e, i) => e.resolve(assigned[i]!));
    this.wake();
    for (const fn of this.appended) fn();
  }

  /**
   * A write of this process committed its event through another connection to the same
   * database (the records store's outbox): wake this instance's tails and tell the other workers,
   * as after an append of its own.
   */
  notifyAppended(): void {
    this.wake();
    for (const fn of this.appended) fn();
  }

  /** Calls `fn`, beside any earlier listener, after each group of events this instance appended (once per group, not per event). */
  onAppended(fn: () => void): void {
    this.appended.push(fn);
  }

  /**
   * Another process appended (or this one committed a write with its event: the records store
   * appends to the same database): tails read what is new now instead of at the next poll.
   */
  poke(): void {
    this.wake();
  }

  async epoch(): Promise<string> {
    return this.epochId;
  }

  async head(_project: ProjectId): Promise<number> {
    return this.lastAssigned();
  }

  /**
   * One read transaction (the page and the trim check see the same snapshot) walking the index
   * on (project, collection, seq) row by row and stopping at the first limit reached: the rows
   * beyond it are never read from disk.
   */
  async read(project: ProjectId, collection: string, after: number, limits: ReadLimits = {}): Promise<EventPage> {
    const limit = limits.limit ?? 1000;
    const maxBytes = limits.maxBytes ?? Infinity;
    return this.db.transaction((): EventPage => {
      const rows: Row[] = [];
      let bytes = 0;
      let done = true;
      // Contiguity: each event names the collection's event before it, so one missing from
      // between `after` and the page, or from inside it, is seen (a gap is never replayed over).
      let gap = false;
      let previous = after;
      for (const row of this.collectionAfter.iterate(project, collection, after)) {
        if (rows.length >= limit || bytes >= maxBytes) {
          done = false;
          break;
        }
        if (row.cprev > 0 && (rows.length === 0 ? row.cprev > after : row.cprev !== previous)) gap = true;
        previous = row.seq;
        rows.push(row);
        bytes += Buffer.byteLength(row.payload);
      }
      const last = this.lastAssigned();
      const first = this.first.get()?.seq ?? last + 1;
      const purgedThrough = this.purgePoint.get(project)?.through ?? 0;
      const trimmed = gap || after + 1 < first || after > last || after < purgedThrough;
      const events = rows.map(toEvent);
      return { events, bytes, trimmed, next: done ? Math.max(after, last) : rows[rows.length - 1]!.seq, done, epoch: this.epochId };
    })();
  }

  async countAfter(project: ProjectId, collection: string, after: number, atMost: number): Promise<number> {
    return this.countCollectionAfter.get(project, collection, after, atMost + 1)!.n;
  }

  async tail(listener: EventListener, wanted?: () => boolean, onReset?: TailReset): Promise<() => void> {
    const entry = { listener, wanted, onReset, position: this.lastAssigned() };
    this.tails.add(entry);
    this.timer ??= setInterval(() => this.poll(), this.pollMs);
    this.timer.unref?.();
    return () => {
      this.tails.delete(entry);
      if (this.tails.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = null;
      }
    };
  }

  private wake(): void {
    if (this.wakeScheduled || this.tails.size === 0) return;
    this.wakeScheduled = true;
    setImmediate(() => {
      this.wakeScheduled = false;
      this.poll();
    });
  }

  private poll(): void {
    for (const t of this.tails) {
      if (t.wanted && !t.wanted()) {
        // Nobody to deliver to: move past what is appended, without reading it (every write
        // on any worker would otherwise be read and parsed here).
        t.position = Math.max(t.position, this.lastAssigned());
        continue;
      }
      for (;;) {
        const rows = this.after.all(t.position, 1000);
        if (rows.length === 0) break;
        // Each row names the seq before it: one that does not follow the last row read means
        // rows were trimmed before this tail read them (it fell behind the retention).
        const gap = rows.findIndex((r, i) => r.prev > 0 && r.prev !== (i === 0 ? t.position : rows[i - 1]!.seq));
        t.position = rows[rows.length - 1]!.seq;
        if (gap >= 0) t.onReset?.('gap');
        // Purge markers (collection '') only keep the chain of predecessors whole.
        const events = rows.filter((r) => r.collection !== '').map(toEvent);
        if (events.length > 0) t.listener(events);
        if (rows.length < 1000) break;
      }
    }
  }

  /**
   * One write transaction: appends a purge marker (collection '', no record data; readers of a
   * collection never see it, tails skip it) whose seq is the purge point, records it in
   * `purges`, and deletes the project's events before it through the index on (project,
   * collection, seq). The marker keeps the chain of predecessors whole. Cost: the project's
   * retained events.
   */
  async purge(project: ProjectId): Promise<number> {
    this.appendQueued(true);
    return this.db.transaction((): number => {
      const through = appendEvent(this.db, { project, collection: '', kind: 'collection', revision: null, committed_at: Date.now() });
      this.db.prepare('INSERT INTO purges (project, through) VALUES (?, ?) ON CONFLICT (project) DO UPDATE SET through = excluded.through').run(project, through);
      this.db.prepare('DELETE FROM events WHERE project = ? AND seq < ?').run(project, through);
      return through;
    }).immediate();
  }

  /**
   * Deletes from the oldest end, a step of events per statement (deleteInSteps), and lets the
   * event loop run between statements, until the oldest events are within the retention: each
   * statement looks at one step's rows only (by the primary key), so a trim never stops this
   * worker, nor holds the log's write lock, for more than one step takes. (One statement over the
   * whole log measured ≈0.5 s for 360,000 events, and scanned the whole log even when nothing
   * was due; in steps the 360,000 take ≈0.55 s in all, spread out.)
   * Events are in seq order and nearly in `committed_at` order; one younger event among older
   * ones ends this trim early, and the next trim takes the rest.
   */
  trim(now = Date.now()): Promise<void> {
    this.trimming ??= this.trimChunks(now).finally(() => {
      this.trimming = null;
    });
    return this.trimming;
  }

  private async trimChunks(now: number): Promise<void> {
    const keepFrom = this.lastAssigned() - this.retention.maxEvents;
    const before = now - this.retention.maxAgeMs;
    await deleteInSteps((limit) => this.trimOldest.run(limit, keepFrom, before).changes, () => this.closed);
  }

  async purgedThrough(project: ProjectId): Promise<number> {
    return this.purgePoint.get(project)?.through ?? 0;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.appendQueued(true);
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.tails.clear();
    this.db.close();
  }
}

function toEvent(row: Row): ChangeEvent {
  return { ...(JSON.parse(row.payload) as ChangeEventInput), seq: row.seq };
}
