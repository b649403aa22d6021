/**
 * RecordStore on MongoDB (majority writes with a timeout). One MongoDB collection per Plinth
 * collection, real indexes for `indexed`/`unique` fields (mongo-collections.ts); compare-and-set
 * is one findOneAndUpdate with the version in the filter; an insert with an idempotency key, and
 * every write with an outbox (mongo-outbox.ts), is one transaction: it needs a replica set.
 */
import { AdmissionQueue, ConflictError, ensureMongoIndex, migrateMongo, MONGO_MAJORITY, NotFoundError, openOnMongo, transactionOptions, type Collection, type ProjectId, type RecordDoc } from '@plinth/shared';
import type { ClientSession, Db, Document, Sort, TransactionOptions, WriteConcernSettings } from 'mongodb';
import { RANK_ORDER, type AggregateQuery, type AggregateResult, type CollectionChange, type DeletePlan, type IdempotencyClaim, type InsertResult, type OutboxEvent, type RecordQuery, type RecordStore } from '../record-store';
import { RANK_SORT, withSearch } from './mongo-search';
import { aggregatePipeline, aggregateResult } from './mongo-aggregate';
import { joinRecord, keysetPredicate, splitRecord } from '../record-shape';
import { assertStorable } from '../storable';
import { compileFilter, compileKeyset, fieldPath, keysetBound, sortSpec, type RecordDocument } from './mongo-filter';
import { COLLECTIONS, MongoCollections, PUBLISHED, isDuplicateKey, isTimeLimit, reportedField, type CollectionDocument } from './mongo-collections';
import { uniqueConflict, uniqueValues } from '../unique-conflict';
import { queryTimeout } from '../query-timeout';
import { applyDeletePlanMongo } from './mongo-delete-plan';
import { applyMongoBatch } from './mongo-batch';
import type { BatchApplied, BatchIdempotency, BatchWrite } from '../batch-write';
import { appendMongoEvent, initMongoOutbox, mongoOutboxLog, writeWithEvent, type MongoOutboxLog } from './mongo-outbox';

const IDEMPOTENCY = 'plinth_idempotency_keys';

export interface MongoRecordStoreOptions {
  /** Server-side time limit of one query (maxTimeMS); over it the request is a 503. Default 5000. */
  queryTimeMs?: number;
  /** How long a majority write waits for replication before it fails (wtimeoutMS). Default 10000. */
  writeTimeoutMs?: number;
  /** How long one transaction commit may take (maxCommitTimeMS); over it the request is a 503. Default 5000. */
  commitTimeMs?: number;
  /**
   * Time budget of the index builds of one collection create or change (maxTimeMS); past it the
   * request is a 503 and nothing changes. Default 20000 (under the gateway's 30 s proxy timeout).
   */
  indexBuildTimeMs?: number;
  /**
   * Queries running at once per process (default 32; a project may hold half, a caller a
   * quarter), and the bounds of the queue in front of them (default 100 waiting, 1000 ms): past
   * them a query is refused with 503 overloaded + Retry-After. The wait counts against its budget.
   */
  admission?: { concurrency?: number; maxQueued?: number; maxWaitMs?: number };
  /**
   * Keep the change events in the outbox collection (mongo-outbox.ts), each written in its
   * write's transaction (a cluster with a relay to Redis). Default false.
   */
  outbox?: boolean;
}

interface IdempotencyDocument {
  _id: string;
  project: string;
  collection: string;
  fingerprint: string;
  record: RecordDoc;
  /** A Date so the TTL index removes it once expired. */
  expires_at: Date;
}

function toRecord(doc: RecordDocument): RecordDoc {
  const { _id, version, created_at, updated_at, data } = doc;
  return joinRecord({ id: _id, version, created_at, updated_at, data: data as RecordDoc });
}

function toDocument(record: RecordDoc): RecordDocument {
  const { id, ...rest } = splitRecord(record);
  return { _id: id, ...rest };
}

export class MongoRecordStore implements RecordStore {
  readonly writesEvents: boolean;
  private readonly majority: WriteConcernSettings;
  private readonly queryTimeMs: number;
  private readonly collections: MongoCollections;
  private readonly transactionOptions: TransactionOptions;
  /** Fair, bounded admission of queries (AdmissionQueue): one caller cannot take every connection. */
  private readonly admission: AdmissionQueue;

  /** `onClose` runs on close() (releases the connection when the store owns it). */
  constructor(
    /** Also where GridFS file storage lives (files/storage/gridfs-file-storage.ts). */
    readonly db: Db,
    private readonly onClose: () => Promise<void> = async () => {},
    options: MongoRecordStoreOptions = {},
  ) {
    this.writesEvents = options.outbox ?? false;
    this.majority = { ...MONGO_MAJORITY, ...(options.writeTimeoutMs ? { wtimeoutMS: options.writeTimeoutMs } : {}) };
    this.queryTimeMs = options.queryTimeMs ?? 5_000;
    this.collections = new MongoCollections(db, this.majority, options.indexBuildTimeMs ?? 20_000);
    this.transactionOptions = transactionOptions(options.commitTimeMs, this.majority);
    const concurrency = options.admission?.concurrency ?? 32;
    const maxQueued = options.admission?.maxQueued ?? 100;
    this.admission = new AdmissionQueue({
      name: 'queries',
      concurrency,
      maxQueued,
      maxQueuedPerCaller: Math.max(1, Math.floor(maxQueued / 2)),
      maxWaitMs: options.admission?.maxWaitMs ?? 1000,
      maxRunningPerProject: Math.max(1, Math.ceil(concurrency / 2)),
      maxRunningPerCaller: Math.max(1, Math.ceil(concurrency / 4)),
    });
  }

  /** Connects through the process' shared client and creates the service's own indexes. */
  static async connect(url: string, options: MongoRecordStoreOptions = {}): Promise<MongoRecordStore> {
    return openOnMongo(url, async (client, release) => {
      const store = new MongoRecordStore(client.db(), release, options);
      await store.init();
      return store;
    });
  }

  /** Creates the indexes of the service's own collections (idempotent; replaces ones whose options changed). */
  async init(): Promise<void> {
    // Before the indexes: an older release must not rebuild the indexes of a newer one's data.
    await migrateMongo(this.db, { component: 'records', where: `MongoDB database "${this.db.databaseName}"`, migrations: [] });
    await ensureMongoIndex(this.db.collection(COLLECTIONS), { project: 1, 'collection.name': 1 }, { name: 'project_name' });
    await ensureMongoIndex(this.db.collection(IDEMPOTENCY), { expires_at: 1 }, { name: 'ttl', expireAfterSeconds: 0 });
    // Collection create/delete and project purge delete keys by project and collection.
    await ensureMongoIndex(this.db.collection(IDEMPOTENCY), { project: 1, collection: 1 }, { name: 'project_collection' });
    if (this.writesEvents) await initMongoOutbox(this.db);
  }

  /** `write`, and (outbox) its event in the same transaction when `happened` says it wrote. */
  private withEvent<T>(event: OutboxEvent | undefined, write: (session?: ClientSession) => Promise<T>, happened: (result: T) => boolean): Promise<T> {
    return this.writesEvents && event ? writeWithEvent(this.db, this.transactionOptions, event, write, happened) : write();
  }

  /** A collection change and its event: not one transaction (index builds cannot run in one); the event follows. */
  private async afterChange(event: OutboxEvent | undefined, changed: boolean): Promise<boolean> {
    if (changed) await this.withEvent(event, async () => true, () => true);
    return changed;
  }

  private keys() {
    return this.db.collection<IdempotencyDocument>(IDEMPOTENCY, { writeConcern: this.majority });
  }
  private records(project: ProjectId, name: string) {
    return this.collections.records(project, name);
  }

  async listCollections(project: ProjectId): Promise<Collection[]> {
    const docs = await this.collections.meta().find({ project, ...PUBLISHED }).sort({ 'collection.name': 1 }).toArray();
    return docs.map((d: CollectionDocument) => d.collection);
  }

  async getCollection(project: ProjectId, name: string): Promise<Collection | null> {
    const doc = await this.collections.meta().findOne({ _id: `${project}/${name}`, ...PUBLISHED });
    return doc?.collection ?? null;
  }

  async createCollection(project: ProjectId, collection: Collection): Promise<void> {
    await this.collections.create(project, collection, new Date(), async () => {
      await this.keys().deleteMany({ project, collection: collection.name });
    });
  }

  async updateCollection(project: ProjectId, change: CollectionChange, event?: OutboxEvent): Promise<boolean> {
    return this.afterChange(event, await this.collections.update(project, change.next, change.expectedRevision, change.removedFields));
  }

  async deleteCollection(project: ProjectId, name: string, event?: OutboxEvent): Promise<boolean> {
    const gone = await this.collections.meta().deleteOne({ _id: `${project}/${name}`, ...PUBLISHED });
    await this.keys().deleteMany({ project, collection: name });
    await this.records(project, name).drop();
    return this.afterChange(event, gone.deletedCount === 1);
  }

  async purgeProject(project: ProjectId): Promise<void> {
    // Definitions first (pending claims too), so no insert is confirmed from here on.
    await this.collections.meta().deleteMany({ project });
    await this.keys().deleteMany({ project });
    // Every per-collection store of the project, a dropped one an insert re-created included.
    const prefix = `rec_${project}_`;
    const stores = await this.db.listCollections({ name: { $regex: `^${prefix}` } }, { nameOnly: true }).toArray();
    for (const { name } of stores) await this.db.collection(name).drop();
  }

  /**
   * An insert racing its collection's deletion can land after the drop, in a collection MongoDB
   * then creates anew: it is undone and answered 404, as on SQLite. One read by primary key.
   */
  private async confirmCollection(project: ProjectId, collection: Collection, record: RecordDoc, keyId?: string): Promise<void> {
    const live = await this.collections
      .meta()
      .findOne({ _id: `${project}/${collection.name}`, ...PUBLISHED, 'collection.created_at': collection.created_at }, { projection: { _id: 1 } });
    if (live) return;
    await this.records(project, collection.name).deleteOne({ _id: { $eq: record.id } });
    if (keyId) await this.keys().deleteOne({ _id: keyId });
    throw new NotFoundError(`Collection "${collection.name}" does not exist.`);
  }

  /**
   * Claim + insert as one transaction (retried by the driver on transient errors such as a
   * write conflict with a concurrent claim, or a failover): the key and the record are stored
   * together or not at all, so a retry after any error can neither duplicate the record nor
   * replay one that was never stored.
   */
  private async insertIdempotent(project: ProjectId, collection: string, record: RecordDoc, claim: IdempotencyClaim, event?: OutboxEvent): Promise<InsertResult> {
    const _id = `${project}/${collection}/${claim.key}`;
    const now = new Date(claim.now);
    const session = this.db.client.startSession();
    try {
      return await session.withTransaction(
        async () => {
          const keys = this.keys();
          const prior = await keys.findOne({ _id }, { session });
          if (prior && prior.expires_at > now) {
            if (prior.fingerprint !== claim.fingerprint) {
              throw new ConflictError('This Idempotency-Key was used with another request body.', { header: 'Idempotency-Key' });
            }
            return { record: prior.record, replayed: true };
          }
          if (prior) await keys.deleteOne({ _id }, { session });
          const entry = { _id, project, collection, fingerprint: claim.fingerprint, record, expires_at: new Date(claim.expiresAt) };
          try {
            await keys.insertOne(entry, { session });
          } catch (err) {
            if (isDuplicateKey(err)) throw new ConflictError('This Idempotency-Key is in use; retry.', { header: 'Idempotency-Key' });
            throw err;
          }
          await this.records(project, collection).insertOne(toDocument(record), { session });
          if (event && this.writesEvents) await appendMongoEvent(this.db, session, event);
          return { record, replayed: false };
        },
        this.transactionOptions,
      );
    } finally {
      await session.endSession();
    }
  }

  /**
   * A unique violation as ConflictError naming the first unique field of the definition that
   * conflicts (unique-conflict.ts), whichever index the server checked first.
   */
  private async translateUnique(err: unknown, project: ProjectId, collection: Collection, record: RecordDoc): Promise<never> {
    if (!isDuplicateKey(err)) throw err;
    const reported = reportedField(err);
    if (reported === undefined) throw uniqueConflict(undefined);
    const records = this.records(project, collection.name);
    for (const [field, value] of uniqueValues(collection, record)) {
      const other = await records.findOne({ [fieldPath(field)]: { $eq: value }, _id: { $ne: record.id } }, { projection: { _id: 1 } });
      if (other) throw uniqueConflict(field);
    }
    throw uniqueConflict(reported);
  }

  async insertRecord(project: ProjectId, collection: Collection, record: RecordDoc, idempotency?: IdempotencyClaim, event?: OutboxEvent): Promise<InsertResult> {
    assertStorable(record);
    let result: InsertResult;
    try {
      if (idempotency) result = await this.insertIdempotent(project, collection.name, record, idempotency, event);
      else {
        await this.withEvent(event, (session) => this.records(project, collection.name).insertOne(toDocument(record), { session }), () => true);
        result = { record, replayed: false };
      }
    } catch (err) {
      return this.translateUnique(err, project, collection, record);
    }
    if (!result.replayed) await this.confirmCollection(project, collection, record, idempotency && `${project}/${collection.name}/${idempotency.key}`);
    return result;
  }

  async getRecord(project: ProjectId, collection: Collection, id: string): Promise<RecordDoc | null> {
    const doc = await this.records(project, collection.name).findOne({ _id: { $eq: id } });
    return doc ? toRecord(doc) : null;
  }

  async replaceRecord(project: ProjectId, collection: Collection, next: RecordDoc, expectedVersion: number, event?: OutboxEvent): Promise<RecordDoc | null> {
    assertStorable(next);
    const { _id, version, updated_at, data } = toDocument(next);
    try {
      const write = (session?: ClientSession) =>
        this.records(project, collection.name).findOneAndUpdate({ _id: { $eq: _id }, version: { $eq: expectedVersion } }, { $set: { version, updated_at, data } }, { returnDocument: 'after', session });
      const after = await this.withEvent(event, write, (doc) => doc !== null);
      return after ? toRecord(after) : null;
    } catch (err) {
      return this.translateUnique(err, project, collection, next);
    }
  }

  async deleteRecord(project: ProjectId, collection: Collection, id: string, expectedVersion?: number, event?: OutboxEvent): Promise<boolean> {
    const filter = expectedVersion === undefined ? { _id: { $eq: id } } : { _id: { $eq: id }, version: { $eq: expectedVersion } };
    const result = await this.withEvent(event, (session) => this.records(project, collection.name).deleteOne(filter, { session }), (r) => r.deletedCount === 1);
    return result.deletedCount === 1;
  }

  async applyDeletePlan(project: ProjectId, plan: DeletePlan): Promise<boolean> {
    try {
      const append = this.writesEvents ? (session: ClientSession, e: OutboxEvent) => appendMongoEvent(this.db, session, e) : undefined;
      return await applyDeletePlanMongo(this.db, (p, name) => this.records(p, name), this.transactionOptions, project, plan, append);
    } catch (err) {
      if (isDuplicateKey(err)) throw uniqueConflict(reportedField(err));
      throw err;
    }
  }

  async applyBatch(project: ProjectId, writes: BatchWrite[], idempotency?: BatchIdempotency): Promise<BatchApplied> {
    const append = this.writesEvents ? (session: ClientSession, e: OutboxEvent) => appendMongoEvent(this.db, session, e) : undefined;
    const deps = { db: this.db, records: (p: ProjectId, n: string) => this.records(p, n), keysCollection: IDEMPOTENCY, majority: this.majority, transactionOptions: this.transactionOptions, append };
    return applyMongoBatch(deps, project, writes, idempotency);
  }

  /** The find the store runs for `query`: the filter seeks past the keyset position (see keysetBound). */
  private findFor(project: ProjectId, collection: Collection, query: RecordQuery) {
    const { predicate, orderBy, direction, after, limit } = query;
    const where = compileFilter(predicate, collection);
    if (query.search && orderBy === RANK_ORDER) {
      // Ranked: by relevance, continuing by position (RecordQuery.after; mongo-search.ts).
      const offset = typeof after?.value === 'number' ? after.value : 0;
      return this.records(project, collection.name)
        .find(withSearch(where, query.search))
        .sort(RANK_SORT as Sort)
        .skip(offset)
        .limit(limit)
        .maxTimeMS(query.timeoutMs ?? this.queryTimeMs);
    }
    const filter = after
      ? { $and: [where, ...keysetBound(orderBy, direction, after, collection), compileKeyset(keysetPredicate(orderBy, direction, after), collection)] }
      : where;
    return this.records(project, collection.name)
      .find(withSearch(filter, query.search))
      .sort(sortSpec(orderBy, direction))
      .limit(limit)
      .maxTimeMS(query.timeoutMs ?? this.queryTimeMs);
  }

  /** At most `limit` records, stopping early after the one that reaches `maxBytes` (the page budget). */
  async queryRecords(project: ProjectId, collection: Collection, query: RecordQuery): Promise<RecordDoc[]> {
    const budget = query.timeoutMs ?? this.queryTimeMs;
    const client = query.client ?? { id: 'anonymous' };
    return this.admission.run({ project, caller: client.id, signal: client.signal, maxWaitMs: budget }, ({ waitedMs }) =>
      // The server's time limit is what is left of the budget after the wait (at least 1 ms).
      this.runQuery(project, collection, { ...query, timeoutMs: Math.max(1, Math.floor(budget - waitedMs)) }, budget),
    );
  }

  private async runQuery(project: ProjectId, collection: Collection, query: RecordQuery, budget: number): Promise<RecordDoc[]> {
    const records: RecordDoc[] = [];
    let bytes = 0;
    try {
      for await (const doc of this.findFor(project, collection, query)) {
        const record = toRecord(doc);
        records.push(record);
        if (query.maxBytes === undefined) continue;
        bytes += JSON.stringify(splitRecord(record).data).length;
        if (bytes >= query.maxBytes) break;
      }
    } catch (err) {
      // MaxTimeMSExpired: the server stopped the query at its time budget.
      if (isTimeLimit(err)) throw queryTimeout(budget);
      throw err;
    }
    return records;
  }

  /**
   * One aggregation pipeline (mongo-aggregate.ts), admitted like a query (same queue and fair
   * share); the server stops it at what is left of the time budget after the wait.
   */
  async aggregateRecords(project: ProjectId, collection: Collection, query: AggregateQuery): Promise<AggregateResult> {
    const budget = query.timeoutMs ?? this.queryTimeMs;
    const client = query.client ?? { id: 'anonymous' };
    return this.admission.run({ project, caller: client.id, signal: client.signal, maxWaitMs: budget }, async ({ waitedMs }) => {
      try {
        const [group] = await this.records(project, collection.name)
          .aggregate(aggregatePipeline(collection, query), { maxTimeMS: Math.max(1, Math.floor(budget - waitedMs)) })
          .toArray();
        return aggregateResult(query, group);
      } catch (err) {
        if (isTimeLimit(err)) throw queryTimeout(budget);
        throw err;
      }
    });
  }

  /** The server's plan and execution statistics of `query` (operators and tests check index use). */
  async explainQuery(project: ProjectId, collection: Collection, query: RecordQuery): Promise<Document> {
    return this.findFor(project, collection, query).explain('executionStats');
  }

  /** The outbox as the relay reads it, and its upkeep (a store made with `outbox: true`). */
  outboxLog = (): MongoOutboxLog => mongoOutboxLog(this.db);

  async ping(): Promise<void> {
    await this.db.command({ ping: 1 });
  }

  stopAdmission(): void {
    this.admission.close();
  }

  async close(): Promise<void> {
    this.admission.close();
    await this.onClose();
  }
}
