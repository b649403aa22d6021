/**
 * RecordStore on SQLite (better-sqlite3, WAL). One table per collection holding the user fields
 * as JSON; every `indexed` or `unique` field gets a real expression index on
 * `json_extract(data, '$.field')`, the same expression the query compiler emits, so equality,
 * range and orderBy on those fields are index searches (see the EXPLAIN QUERY PLAN test).
 */
import type { Statement } from 'better-sqlite3';
import {
  appendEvent,
  ConflictError,
  isSqliteUniqueViolation,
  migrateEventLog,
  migrateSqlite,
  openSqlite,
  WriteRetry,
  type Collection,
  type ProjectId,
  type RecordDoc,
  type SqliteDatabase,
} from '@plinth/shared';
import type { AggregateQuery, AggregateResult, CollectionChange, DeletePlan, IdempotencyClaim, InsertResult, OutboxEvent, QueryBounds, RecordQuery, RecordStore } from '../record-store';
import { joinRecord, splitRecord } from '../record-shape';
import { assertStorable } from '../storable';
import type { SqlValue } from './sqlite-predicate';
import { firstTaken, translateUnique } from './sqlite-unique';
import { createRecordTable, removeFieldsFromUnreadableRows, syncIndexes } from './sqlite-record-tables';
import { querySql } from './sqlite-query-sql';
import { aggregateResult, aggregateSql } from './sqlite-aggregate-sql';
import type { QueryJob, RawRow } from './sqlite-query-job';
import { SqliteQueryLanes, type QueryAdmissionOptions } from './sqlite-query-lanes';
import { InlineQueryBudget } from './inline-query-budget';
import { SqliteQueryRunner, isPointQuery } from './sqlite-query-runner';
import { SqliteIdempotencyKeys } from './sqlite-idempotency-keys';
import { SqliteWriteBatch } from './sqlite-write-batch';
import { runDeletePlan } from './sqlite-delete-plan';
import { dropProjectSearchIndexes, dropSearchIndex } from './sqlite-search-index';
import { applySqliteBatch } from './sqlite-batch';
import type { BatchApplied, BatchIdempotency, BatchWrite } from '../batch-write';
import { runTolerant, tableGone } from './sqlite-query-errors';

type RecordRow = RawRow;

export interface SqliteRecordStoreOptions {
  /**
   * Reader threads that run queries off the event loop, in each of the two query lanes
   * (sqlite-query-lanes.ts; 0 or `:memory:`: on the event loop).
   */
  readers?: number;
  /** Bounds of the queues in front of the readers. */
  admission?: QueryAdmissionOptions;
  /**
   * With readers: how long a query runs on the event loop first, in ms, before it moves to a
   * reader (inline-query-budget.ts). Default 0: every query goes to a reader.
   */
  inlineQueryMs?: number;
  /**
   * Keep the change-event log (the outbox, `events`) in this database: every write appends its
   * event in its own transaction (sqlite-outbox.ts). Standalone mode; off when Redis carries events.
   */
  outbox?: boolean;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS collections (
  project TEXT NOT NULL,
  name TEXT NOT NULL,
  revision INTEGER NOT NULL,
  body TEXT NOT NULL,
  PRIMARY KEY (project, name)
) WITHOUT ROWID;
`;

/** Project ids have no `_`, so `rec_<project>_<collection>` is unambiguous. Names are validated. */
export function recordTable(project: ProjectId, collection: string): string {
  return `rec_${project}_${collection}`;
}

function toRecord(row: RecordRow): RecordDoc {
  return joinRecord({ ...row, data: JSON.parse(row.data) as RecordDoc });
}

/** Most distinct SQL texts kept prepared (query shapes vary with the predicate). */
const MAX_STATEMENTS = 500;

export class SqliteRecordStore implements RecordStore {
  private readonly statements = new Map<string, Statement>();
  private readonly parsedCollections = new Map<string, { body: string; collection: Collection }>();

  /**
   * The prepared statement for `sql`, prepared once and reused (SQLite re-prepares it by itself
   * after a schema change). Preparing on every request cost more than running most queries.
   */
  private prepared(sql: string): Statement {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      if (this.statements.size >= MAX_STATEMENTS) this.statements.delete(this.statements.keys().next().value as string);
      stmt = this.db.prepare(sql);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  private readonly writes: WriteRetry;
  private readonly keys: SqliteIdempotencyKeys;
  /** Group commit of create, update and delete (sqlite-write-batch.ts). */
  private readonly batch: SqliteWriteBatch;
  /** Where queries run: the event loop or a reader thread (sqlite-query-runner.ts). */
  private readonly queries: SqliteQueryRunner;

  constructor(
    private readonly db: SqliteDatabase,
    lanes: SqliteQueryLanes | null = null,
    inline = new InlineQueryBudget({ sliceMs: 0 }),
    readonly writesEvents = false,
  ) {
    const baseline = (): void => {
      db.exec(SCHEMA);
      if (writesEvents) migrateEventLog(db);
    };
    migrateSqlite(db, { component: 'records', where: db.name, baseline, migrations: [] });
    this.keys = new SqliteIdempotencyKeys(db);
    this.writes = new WriteRetry(db);
    this.batch = new SqliteWriteBatch(db, this.writes);
    this.queries = new SqliteQueryRunner(db, (sql) => this.prepared(sql), lanes, inline);
  }

  /** Opens (creating) the database file; `:memory:` for tests. */
  static open(file: string, opts: SqliteRecordStoreOptions = {}): SqliteRecordStore {
    const db = openSqlite(file);
    const lanes = file !== ':memory:' && (opts.readers ?? 0) > 0 ? new SqliteQueryLanes(file, opts.readers as number, opts.admission) : null;
    return new SqliteRecordStore(db, lanes, new InlineQueryBudget({ sliceMs: opts.inlineQueryMs ?? 0 }), opts.outbox ?? false);
  }

  /** Appends `event` to the outbox, inside the caller's transaction (no-op without an outbox). */
  private appendEvent(event: OutboxEvent | undefined): void {
    if (event && this.writesEvents) appendEvent(this.db, event);
  }

  async listCollections(project: ProjectId): Promise<Collection[]> {
    const rows = this
      .prepared('SELECT body FROM collections WHERE project = ? ORDER BY name')
      .all(project) as Array<{ body: string }>;
    return rows.map((r) => JSON.parse(r.body) as Collection);
  }

  async getCollection(project: ProjectId, name: string): Promise<Collection | null> {
    // Every record request loads its collection: the parsed definition is reused while the stored
    // text is the same (a string compare costs far less than JSON.parse). Treat it as read-only.
    const row = this.prepared('SELECT body FROM collections WHERE project = ? AND name = ?').get(project, name) as
      | { body: string }
      | undefined;
    const key = `${project}\n${name}`;
    if (!row) {
      this.parsedCollections.delete(key);
      return null;
    }
    const known = this.parsedCollections.get(key);
    if (known && known.body === row.body) return known.collection;
    const collection = JSON.parse(row.body) as Collection;
    if (this.parsedCollections.size >= MAX_STATEMENTS) this.parsedCollections.delete(this.parsedCollections.keys().next().value as string);
    this.parsedCollections.set(key, { body: row.body, collection });
    return collection;
  }

  async createCollection(project: ProjectId, collection: Collection): Promise<void> {
    const table = recordTable(project, collection.name);
    this.db.transaction(() => {
      try {
        this
          .prepared('INSERT INTO collections (project, name, revision, body) VALUES (?, ?, ?, ?)')
          .run(project, collection.name, collection.revision, JSON.stringify(collection));
      } catch (err) {
        if (isSqliteUniqueViolation(err)) throw new ConflictError(`Collection "${collection.name}" already exists.`, { name: collection.name });
        throw err;
      }
      createRecordTable(this.db, table);
      syncIndexes(this.db, (sql) => this.prepared(sql), table, collection);
    }).immediate();
  }

  async updateCollection(project: ProjectId, change: CollectionChange, event?: OutboxEvent): Promise<boolean> {
    const { next, expectedRevision, removedFields } = change;
    const table = recordTable(project, next.name);
    return this.db.transaction(() => {
      const saved = this
        .prepared('UPDATE collections SET revision = ?, body = ? WHERE project = ? AND name = ? AND revision = ?')
        .run(next.revision, JSON.stringify(next), project, next.name, expectedRevision);
      if (saved.changes === 0) return false;
      // A record that loses a value gets a new version: a PATCH that read it before the removal
      // fails its compare-and-set and re-reads, instead of writing the removed value back.
      for (const field of removedFields) {
        this.prepared(`UPDATE "${table}" SET data = json_remove(data, '$.${field}'), version = version + 1
          WHERE json_valid(data) AND json_type(data, '$.${field}') IS NOT NULL`).run();
      }
      if (removedFields.length > 0) removeFieldsFromUnreadableRows((sql) => this.prepared(sql), table, removedFields);
      syncIndexes(this.db, (sql) => this.prepared(sql), table, next);
      this.appendEvent(event);
      return true;
    }).immediate();
  }

  async deleteCollection(project: ProjectId, name: string, event?: OutboxEvent): Promise<boolean> {
    return this.db.transaction(() => {
      const gone = this.prepared('DELETE FROM collections WHERE project = ? AND name = ?').run(project, name);
      this.keys.forgetCollection(project, name);
      dropSearchIndex(this.db, recordTable(project, name));
      this.db.exec(`DROP TABLE IF EXISTS "${recordTable(project, name)}"`);
      if (gone.changes > 0) this.appendEvent(event);
      return gone.changes > 0;
    }).immediate();
  }

  async purgeProject(project: ProjectId): Promise<void> {
    const prefix = recordTable(project, '');
    this.db.transaction(() => {
      this.prepared('DELETE FROM collections WHERE project = ?').run(project);
      this.keys.forgetProject(project);
      dropProjectSearchIndexes(this.db, prefix);
      const tables = this
        .prepared(`SELECT name FROM sqlite_master WHERE type = 'table' AND substr(name, 1, ?) = ?`)
        .all(prefix.length, prefix) as Array<{ name: string }>;
      for (const { name } of tables) this.db.exec(`DROP TABLE IF EXISTS "${name}"`);
    }).immediate();
  }

  /** Runs `fn`; a table dropped by a concurrent collection delete becomes 404. */
  private onTable<T>(collection: Collection, fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      throw tableGone(collection, err);
    }
  }

  /** Awaits `write`; a table dropped by a concurrent collection delete becomes 404. */
  private async onTableAsync<T>(collection: Collection, write: Promise<T>): Promise<T> {
    try {
      return await write;
    } catch (err) {
      throw tableGone(collection, err);
    }
  }

  async insertRecord(
    project: ProjectId,
    collection: Collection,
    record: RecordDoc,
    idempotency?: IdempotencyClaim,
    event?: OutboxEvent,
  ): Promise<InsertResult> {
    assertStorable(record);
    const table = recordTable(project, collection.name);
    const r = splitRecord(record);
    const insertRow = (): void => {
      try {
        this
          .prepared(`INSERT INTO "${table}" (id, version, created_at, updated_at, data) VALUES (?, ?, ?, ?, ?)`)
          .run(r.id, r.version, r.created_at, r.updated_at, JSON.stringify(r.data));
      } catch (err) {
        translateUnique(err, () => firstTaken((sql) => this.prepared(sql), table, collection, record));
      }
      this.appendEvent(event);
    };
    if (!idempotency) {
      // One INSERT, committed with the other writes of this turn of the event loop.
      await this.onTableAsync(collection, this.batch.run(insertRow));
      return { record, replayed: false };
    }
    this.keys.purgeExpired(idempotency.now);
    return this.onTable(collection, () =>
      this.writes.run(() => this.db.transaction((): InsertResult => {
        const replayed = this.keys.replay(project, collection.name, idempotency);
        if (replayed) return { record: replayed, replayed: true };
        insertRow();
        this.keys.remember(project, collection.name, idempotency, record);
        return { record, replayed: false };
      }).immediate()),
    );
  }

  /** Number of idempotency keys held (expired ones included until purged). */
  countIdempotencyKeys(): number {
    return this.keys.count();
  }

  async getRecord(project: ProjectId, collection: Collection, id: string): Promise<RecordDoc | null> {
    const table = recordTable(project, collection.name);
    const row = this.onTable(collection, () =>
      this.prepared(`SELECT id, version, created_at, updated_at, data FROM "${table}" WHERE id = ?`).get(id),
    ) as RecordRow | undefined;
    return row ? toRecord(row) : null;
  }

  async replaceRecord(project: ProjectId, collection: Collection, next: RecordDoc, expectedVersion: number, event?: OutboxEvent): Promise<RecordDoc | null> {
    assertStorable(next);
    const table = recordTable(project, collection.name);
    const r = splitRecord(next);
    const data = JSON.stringify(r.data);
    const result = await this.onTableAsync(
      collection,
      this.batch.run(() => {
        try {
          const update = this.prepared(`UPDATE "${table}" SET version = ?, updated_at = ?, data = ? WHERE id = ? AND version = ?`);
          const done = update.run(r.version, r.updated_at, data, r.id, expectedVersion);
          if (done.changes === 1) this.appendEvent(event);
          return done;
        } catch (err) {
          return translateUnique(err, () => firstTaken((sql) => this.prepared(sql), table, collection, next));
        }
      }),
    );
    return result.changes === 1 ? next : null;
  }

  async deleteRecord(project: ProjectId, collection: Collection, id: string, expectedVersion?: number, event?: OutboxEvent): Promise<boolean> {
    const table = recordTable(project, collection.name);
    const result = await this.onTableAsync(
      collection,
      this.batch.run(() => {
        const done =
          expectedVersion === undefined
            ? this.prepared(`DELETE FROM "${table}" WHERE id = ?`).run(id)
            : this.prepared(`DELETE FROM "${table}" WHERE id = ? AND version = ?`).run(id, expectedVersion);
        if (done.changes === 1) this.appendEvent(event);
        return done;
      }),
    );
    return result.changes === 1;
  }

  applyDeletePlan(project: ProjectId, plan: DeletePlan): Promise<boolean> {
    return runDeletePlan(this.db, this.batch, (sql) => this.prepared(sql), recordTable, project, plan, () => {
      for (const e of plan.events ?? []) this.appendEvent(e);
    });
  }

  async applyBatch(project: ProjectId, writes: BatchWrite[], idempotency?: BatchIdempotency): Promise<BatchApplied> {
    const append = (event: OutboxEvent) => this.appendEvent(event); // the outbox, in the batch's transaction
    return applySqliteBatch({ db: this.db, writes: this.writes, keys: this.keys, prepared: (sql) => this.prepared(sql), table: recordTable, append }, project, writes, idempotency);
  }

  /** The SELECTs a query runs, in order (sqlite-query-sql.ts); exposed for EXPLAIN QUERY PLAN. */
  querySql(project: ProjectId, collection: Collection, query: RecordQuery, tolerant = false): Array<{ sql: string; params: SqlValue[] }> {
    return querySql(recordTable(project, collection.name), collection, query, tolerant);
  }

  async queryRecords(project: ProjectId, collection: Collection, query: RecordQuery): Promise<RecordDoc[]> {
    const rows = await this.runJob(project, collection, query, isPointQuery(query), (tolerant) => ({
      runs: this.querySql(project, collection, query, tolerant),
      limit: query.limit,
      maxBytes: query.maxBytes ?? Infinity,
    }));
    return rows.map(toRecord);
  }

  async aggregateRecords(project: ProjectId, collection: Collection, query: AggregateQuery): Promise<AggregateResult> {
    const rows = await this.runJob(project, collection, query, false, (tolerant) => ({
      runs: [aggregateSql(recordTable(project, collection.name), collection, query, tolerant)],
      limit: 1,
      maxBytes: Infinity,
    }));
    return aggregateResult(query, rows[0]);
  }

  /**
   * The rows of a job, run where the query runner puts it (admitted to the readers' lanes for
   * `q.client`), within `q.timeoutMs`; its errors translated (sqlite-query-errors.ts).
   */
  private runJob(project: ProjectId, collection: Collection, q: QueryBounds, point: boolean, job: (tolerant: boolean) => QueryJob): Promise<RawRow[]> {
    const run = (j: QueryJob) => this.queries.run(project, q.client, j, q.timeoutMs ?? Infinity, point);
    return runTolerant(run, collection, q.timeoutMs, job);
  }

  /** EXPLAIN QUERY PLAN of every SELECT of a query (or, with `aggregate`, of an aggregate's), one `detail` line per step. */
  explain(project: ProjectId, collection: Collection, query: RecordQuery | { aggregate: AggregateQuery }): string[] {
    const selects = 'aggregate' in query
      ? [aggregateSql(recordTable(project, collection.name), collection, query.aggregate)]
      : this.querySql(project, collection, query);
    const limit = 'aggregate' in query ? 1 : query.limit;
    return selects.flatMap(({ sql, params }) =>
      (this.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params, limit) as Array<{ detail: string }>).map((r) => r.detail),
    );
  }

  async ping(): Promise<void> {
    this.prepared('SELECT 1').get();
  }

  stopAdmission(): void {
    this.queries.stopAdmission();
  }

  async close(): Promise<void> {
    this.batch.flush(true);
    await this.queries.close();
    if (this.db.open) this.db.close();
  }
}
