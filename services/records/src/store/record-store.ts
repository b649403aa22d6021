import type { ChangeEventInput, Collection, JsonValue, Predicate, ProjectId, RecordDoc } from '@plinth/shared';
import type { BatchApplied, BatchIdempotency, BatchWrite } from './batch-write';
import type { IdempotencyClaim } from './idempotency-claim';

/**
 * The change event of a write, given to the store with it. A store with an outbox
 * (`writesEvents`) appends it in the write's own transaction, only when the write happens
 * (docs/architecture.md "The outbox"); the other stores ignore it and the caller publishes it.
 */
export type OutboxEvent = ChangeEventInput;

/** Sort direction of a query; the tie-breaker `id` always follows the same direction. */
export type SortDirection = 'asc' | 'desc';

/**
 * The order of a full-text search by relevance, best match first, ties by id ascending
 * (docs/records.md "Full-text search"). Not a field name (those start with a letter). A ranked
 * page continues by position: `after.value` is the number of records before it.
 */
export const RANK_ORDER = '@rank';

/** Keyset position: the order field's value and the id of the last record of the previous page. */
export interface KeysetPosition {
  /** null when the last record had no value for the order field (nulls sort first ascending). */
  value: JsonValue;
  id: string;
}

/**
 * A validated query. The records service builds it (docs/records.md): every field in `predicate`
 * and `orderBy` is a system field or a declared user field, every value has the field's type.
 */
export interface RecordQuery {
  predicate: Predicate;
  /**
   * Full-text search: only records whose searchable fields hold every one of these words
   * (search-terms.ts; lowercase letters, digits and marks only). Ordered by RANK_ORDER or a field.
   */
  search?: readonly string[];
  orderBy: string;
  direction: SortDirection;
  /** Return only records strictly after this position in (orderBy, id) order. */
  after?: KeysetPosition;
  /** At most this many records (the service asks for one more than the page to detect the end). */
  limit: number;
  /**
   * Byte budget: the adapter stops after the record at which the records returned hold at least
   * this many characters of user data as JSON (`JSON.stringify` of the user fields), so at least
   * one record is returned and the caller can tell a cut page by adding up the same measure.
   */
  maxBytes?: number;
  /**
   * Time budget: a query still running after this many milliseconds is stopped and rejects with
   * a PlinthError `unavailable` (details.reason `query_timeout`).
   */
  timeoutMs?: number;
  /**
   * Who asks (fair share between callers; see QueryClient). The time a query waits for capacity
   * counts against `timeoutMs`; a query that cannot be admitted in time rejects with
   * OverloadedError (503 `overloaded`, Retry-After).
   */
  client?: QueryClient;
}

/**
 * Who a query is for, the unit of fair share when queries wait for capacity: `id` names the
 * caller within the project (a user, an anonymous client address, the secret key), and `signal`
 * aborts when the client has gone, so a query still waiting is dropped before it starts.
 */
export interface QueryClient {
  id: string;
  signal?: AbortSignal;
}

/**
 * A validated aggregate over the records matching `predicate` (the client's where AND the read
 * rule's residual, like a list). `sum` and `avg` name number or integer fields (the service has
 * checked); an empty list asks for none.
 */
export interface AggregateQuery {
  predicate: Predicate;
  /** Full-text search words, as RecordQuery.search. */
  search?: readonly string[];
  sum: readonly string[];
  avg: readonly string[];
  /** Time budget, as RecordQuery.timeoutMs. */
  timeoutMs?: number;
  /** Who asks, as RecordQuery.client: aggregates wait for capacity in the same fair share. */
  client?: QueryClient;
}

/** What bounds any query's run: its time budget and who it is for. */
export type QueryBounds = Pick<RecordQuery, 'timeoutMs' | 'client'>;

/**
 * The answer of an aggregate: `count` of the matching records; per field, the sum of its numeric
 * values (missing and null skipped; 0 when there are none) and their mean (null when none).
 */
export interface AggregateResult {
  count: number;
  sum: { [field: string]: number };
  avg: { [field: string]: number | null };
}

export type { IdempotencyClaim } from './idempotency-claim';

export interface InsertResult {
  record: RecordDoc;
  /** True when an earlier creation with the same idempotency key and body was returned instead. */
  replayed: boolean;
}

/** What changes when a collection's definition is saved. */
export interface CollectionChange {
  /** The definition as it must be stored; its `revision` is the new revision. */
  next: Collection;
  /** The revision the caller read; the save fails (returns false) when it is no longer current. */
  expectedRevision: number;
  /** User fields whose stored values must be removed from every record. */
  removedFields: string[];
}

/** A relation field of a collection: where references to a record may be (docs/records.md, "Relations"). */
export interface RelationRef {
  collection: Collection;
  field: string;
}

/**
 * A record delete with what its relations' `on_delete` asks, written all or nothing
 * (relation-deletes.ts builds it): `deletes` and `replaces` each only while the stored version is
 * still the one read, and each guard only while exactly the records `referencing` (ids) point at
 * one of `targets` through `ref` — so a reference added or changed meanwhile is never left
 * dangling or silently deleted.
 */
export interface DeletePlan {
  deletes: Array<{ collection: Collection; id: string; version: number }>;
  replaces: Array<{ collection: Collection; next: RecordDoc; version: number }>;
  guards: Array<{ ref: RelationRef; targets: string[]; referencing: string[] }>;
  /** The change events of the plan's writes: a store with an outbox appends them in its transaction. */
  events?: OutboxEvent[];
}

/**
 * Storage of collections, records and idempotency keys for every project (docs/architecture.md "Ports and adapters").
 *
 * Records cross this port as RecordDoc: system fields (`id, version, created_at, updated_at`)
 * plus user fields at the top level. Ids, timestamps, versions and validation are the caller's
 * job; adapters store exactly what they are given. Unique violations raise ConflictError whose
 * `details.field` names the field when the adapter can tell.
 */
export interface RecordStore {
  /**
   * True when the store appends the `event` given to a write to its outbox in the write's own
   * transaction (the write and its event commit together or not at all); false when the caller
   * must publish the event after the write.
   */
  readonly writesEvents: boolean;
  /** The project's collections, ordered by name. */
  listCollections(project: ProjectId): Promise<Collection[]>;
  /** Returns null when absent. */
  getCollection(project: ProjectId, name: string): Promise<Collection | null>;
  /**
   * Stores a new collection and creates the real indexes of its `indexed` and `unique` fields.
   * Throws ConflictError when a collection of that name exists in the project.
   */
  createCollection(project: ProjectId, collection: Collection): Promise<void>;
  /**
   * Compare-and-set on the revision: saves `change.next` only while the stored revision equals
   * `change.expectedRevision`, syncing indexes and dropping `removedFields` from every record.
   * Returns false (changing nothing) when the revision moved or the collection is gone.
   * Throws ConflictError when a new unique index meets duplicate values (nothing is changed).
   */
  updateCollection(project: ProjectId, change: CollectionChange, event?: OutboxEvent): Promise<boolean>;
  /** Deletes the collection with all its records and idempotency keys. Returns false when absent. */
  deleteCollection(project: ProjectId, name: string, event?: OutboxEvent): Promise<boolean>;
  /**
   * Deletes everything the project has in this store: every collection (one still being created
   * included), every record, every idempotency key, and storage a failed or racing write left
   * behind without a collection. Idempotent; other projects are untouched.
   */
  purgeProject(project: ProjectId): Promise<void>;

  /**
   * Inserts a record; throws NotFoundError when the collection was deleted meanwhile (the record
   * is not kept). With `idempotency`, atomically: a live key with the same fingerprint
   * returns the record stored with it (`replayed: true`) and inserts nothing; a live key with
   * another fingerprint throws ConflictError; otherwise the record and the key are stored.
   * Throws ConflictError on a unique-field violation (and then stores no key).
   */
  insertRecord(
    project: ProjectId,
    collection: Collection,
    record: RecordDoc,
    idempotency?: IdempotencyClaim,
    event?: OutboxEvent,
  ): Promise<InsertResult>;
  /** Returns null when absent. */
  getRecord(project: ProjectId, collection: Collection, id: string): Promise<RecordDoc | null>;
  /**
   * Compare-and-set, one conditional write: replaces the record `next.id` with `next` only while
   * its stored version equals `expectedVersion`. Of two racing callers with the same expected
   * version exactly one succeeds. Returns null when the version moved or the record is absent.
   * Throws ConflictError on a unique-field violation.
   */
  replaceRecord(
    project: ProjectId,
    collection: Collection,
    next: RecordDoc,
    expectedVersion: number,
    event?: OutboxEvent,
  ): Promise<RecordDoc | null>;
  /**
   * Deletes the record; with `expectedVersion`, only while its stored version equals it (one
   * conditional write). Returns false when nothing was deleted.
   */
  deleteRecord(project: ProjectId, collection: Collection, id: string, expectedVersion?: number, event?: OutboxEvent): Promise<boolean>;
  /**
   * Applies `plan` in one transaction: returns false, writing nothing, when a version moved, a
   * record is gone or a guard's referencing records differ. Throws ConflictError on a
   * unique-field violation (nothing written).
   */
  applyDeletePlan(project: ProjectId, plan: DeletePlan): Promise<boolean>;
  /**
   * Records matching `query.predicate`, ordered by (orderBy, id) in `direction`, strictly after
   * `query.after`, at most `query.limit`. Missing values sort before every value ascending and
   * after every value descending. Both adapters return identical results for identical data.
   */
  queryRecords(project: ProjectId, collection: Collection, query: RecordQuery): Promise<RecordDoc[]>;
  /**
   * Count, sums and means over the records matching `query.predicate`, in one query admitted and
   * bounded like queryRecords. A count alone reads no record bodies where the predicate is
   * served by indexes. Both adapters return identical results for identical data.
   */
  aggregateRecords(project: ProjectId, collection: Collection, query: AggregateQuery): Promise<AggregateResult>;

  /**
   * Applies every write of a batch in one transaction, in order, or none (docs/records.md "Batch
   * writes"). With `idempotency`, atomically: a live key with the same fingerprint returns its
   * stored answer (`replayed`) and writes nothing; another fingerprint throws ConflictError.
   * Throws BatchWriteError naming the first write that failed (nothing is written).
   */
  applyBatch(project: ProjectId, writes: BatchWrite[], idempotency?: BatchIdempotency): Promise<BatchApplied>;

  /** Throws when the backing database is unreachable (drives /readyz). */
  ping(): Promise<void>;
  /**
   * Shutdown, once the grace period is over: queries still waiting for admission are refused
   * (503) and new ones too, so the drain waits only for queries already running.
   */
  stopAdmission(): void;
  close(): Promise<void>;
}
