import type { ProjectId, RecordDoc } from '../types';

/**
 * Record change events, from the records service (writer) to the realtime service (readers).
 *
 * `record`   create: the new record; update: the record after the write; delete: the deleted record.
 * `previous` update and delete: the record before the write (so a reader can tell enter from leave).
 * `revision` collection: the collection's revision after the change (absent when it was deleted).
 */
export type ChangeKind = 'create' | 'update' | 'delete' | 'collection';

export interface ChangeEventInput {
  project: ProjectId;
  collection: string;
  kind: ChangeKind;
  record?: RecordDoc;
  previous?: RecordDoc;
  /** Collection changes: the new revision; null when the collection was deleted. */
  revision?: number | null;
  /** When the write committed, in milliseconds since the epoch (delivery latency is measured from it). */
  committed_at: number;
}

/** A published event: the input plus its position in the log. */
export interface ChangeEvent extends ChangeEventInput {
  /**
   * Position of the event in its project's log. Strictly increasing within a project, in commit
   * order of publication; numbers may be skipped (other projects share the sequence, and a purge
   * of the project takes one). Never reused: a project purged and created again continues above.
   */
  seq: number;
}

/** One page of a collection's history. */
export interface EventPage {
  /** The collection's events (record and collection changes) with seq > the `after` asked for, in seq order. */
  events: ChangeEvent[];
  /** The size of those events as stored (their JSON), in bytes: what a reader charges to its budget. */
  bytes: number;
  /**
   * True when events after `after` were already trimmed away (or `after` lies in the future):
   * the history cannot be replayed gap-free, the reader must resync (fresh snapshot).
   */
  trimmed: boolean;
  /** The last seq examined; read again with `after = next` unless `done`. */
  next: number;
  /** True when the page reached the end of the log as it was when read. */
  done: boolean;
  /**
   * The epoch of the log the page was read from (see EventBus.epoch): a position only means
   * something in its epoch, so a reader holding a position of another epoch must resync.
   */
  epoch: string;
}

/** How much one `read` returns at most; it stops at whichever limit comes first. */
export interface ReadLimits {
  /** Events (default 1000). */
  limit?: number;
  /** Stored bytes of the events returned (default: no limit); the event that passes it is the last one. */
  maxBytes?: number;
}

/** Receives events as they are appended, in seq order per project. */
export type EventListener = (events: ChangeEvent[]) => void;

/**
 * Told when a tail cannot vouch for what it delivered: `gap` — an event it read does not follow
 * the one before (a position skipped or repeated: trimmed before it was read, or a transport
 * that lost entries); `epoch` — the log was made anew (e.g. Redis restarted empty). The tail
 * goes on from the log as it is now; every reader of it must resync.
 */
export type TailReset = (reason: 'gap' | 'epoch') => void;

/** How much history the log keeps. Both limits apply; the oldest events go first. */
export interface EventRetention {
  /** Events kept in total (an adapter with several streams gives each its share). */
  maxEvents: number;
  /** Events older than this are trimmed (milliseconds). */
  maxAgeMs: number;
}

export const DEFAULT_EVENT_RETENTION: EventRetention = { maxEvents: 100_000, maxAgeMs: 60 * 60_000 };

/**
 * The EventBus port (docs/architecture.md "Ports and adapters", docs/architecture.md): an append-only, trimmed log of change events with a
 * monotonically increasing `seq`, readable from any position still retained and tailable live.
 * Adapters: SQLite event log (standalone; several processes on one machine share the file) and
 * Redis Streams (cluster). Both pass `shared/test/event-bus.contract.ts`.
 */
export interface EventBus {
  /**
   * Appends one event after its write committed. Resolves with its seq once it is durable and
   * visible to every reader (in this and other processes). One round trip / one insert.
   */
  publish(event: ChangeEventInput): Promise<number>;
  /**
   * The log's epoch: an id that changes whenever the log is made anew (a new database, a Redis
   * that lost its streams). A seq is a position only together with the epoch it was read in.
   */
  epoch(): Promise<string>;
  /**
   * The last seq assigned in `project`'s log (0 when none). An event published later has a
   * greater seq: a reader that starts at `head` misses nothing published after the call.
   */
  head(project: ProjectId): Promise<number>;
  /**
   * Events of one collection of `project` with seq > `after`, in order, within `limits`: the work
   * is proportional to what is returned (an index on project, collection and seq), not to the
   * project's or the log's other events. `trimmed` is true when the log no longer holds every
   * event after `after`, or when the events read do not follow each other (an adapter whose
   * events name their predecessor checks it: a gap is never replayed over).
   */
  read(project: ProjectId, collection: string, after: number, limits?: ReadLimits): Promise<EventPage>;
  /**
   * How many events of the collection follow `after`, counted up to `atMost + 1` (so a caller can
   * tell "more than atMost" without reading them), from the index alone; null when the adapter
   * cannot count without reading the events (then the reader's `limits` are what bound it).
   */
  countAfter(project: ProjectId, collection: string, after: number, atMost: number): Promise<number | null>;
  /**
   * Calls `listener` with every event (all projects) appended after the returned promise
   * resolves, in seq order per project, also those published by other processes. Resolves with a
   * function that stops it. While `wanted` (optional) returns false, the listener would ignore
   * what it is given (a realtime replica without subscriptions): an adapter may then skip past
   * the events appended meanwhile without reading or decoding them, and they are not delivered.
   * `onReset` is told when the tail detects a gap in what it read or a new epoch (TailReset).
   */
  tail(listener: EventListener, wanted?: () => boolean, onReset?: TailReset): Promise<() => void>;
  /**
   * Forgets every event of `project` (a deleted project; the events carry record data), and
   * returns the purge point: a seq greater than every seq the project had, never given to an
   * event. Afterwards:
   * - `read(project, after)` returns none of the purged events, and reports `trimmed` for any
   *   `after` below the purge point, so a reader holding a position from before the purge (an
   *   old tenant's `resume_from`) is told to resync instead of replaying;
   * - seqs do not restart: events published for the project later (a project re-created with the
   *   same id) get seqs above the purge point, and `head(project)` is at least the purge point;
   * - other projects' events and seqs are untouched (a reader of another project positioned
   *   before the purged events may be answered `trimmed` when they were the oldest retained: a
   *   conservative answer, never a gap).
   * Idempotent; bounded by the retained log (the adapter documents its cost). Safe from several
   * processes. An event published concurrently with the purge may survive it.
   */
  purge(project: ProjectId): Promise<number>;
  /**
   * The project's latest purge point (0 when never purged). Kept for good: a realtime replica
   * the purge call did not reach compares it with the head it saw when a connection opened, and
   * closes the connections opened before the purge.
   */
  purgedThrough(project: ProjectId): Promise<number>;
  /** Drops events beyond the retention (count, and age relative to `now` ms). Safe from several processes. */
  trim(now?: number): Promise<void>;
  /** Stops tails and closes connections. */
  close(): Promise<void>;
}
