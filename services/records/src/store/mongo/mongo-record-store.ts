/**
 * RecordStore on MongoDB (official driver, majority write concern). One MongoDB collection per
 * Plinth collection; `indexed`/`unique` fields get real indexes via createIndex; compare-and-set
 * is one findOneAndUpdate with the version in the filter.
 */
import { ConflictError, type Collection, type ProjectId, type RecordDoc } from '@plinth/shared';
import { MongoClient, MongoServerError, type Db, type IndexDescription, type WriteConcernSettings } from 'mongodb';
import type { CollectionChange, IdempotencyClaim, InsertResult, RecordQuery, RecordStore } from '../record-store';
import { joinRecord, keysetPredicate, splitRecord } from '../record-shape';
import { queryTimeout } from '../query-timeout';
import { compileFilter, compileKeyset, fieldPath, sortSpec, type RecordDocument } from './mongo-filter';

const MAJORITY: WriteConcernSettings = { w: 'majority' };
const COLLECTIONS = 'plinth_collections';
const IDEMPOTENCY = 'plinth_idempotency_keys';

interface CollectionDocument {
  _id: string;
  project: string;
  collection: Collection;
}

interface IdempotencyDocument {
  _id: string;
  project: string;
  collection: string;
  fingerprint: string;
  record: RecordDoc;
  /** A Date so a TTL index can expire it. */
  expires_at: Date;
}

function isDuplicateKey(err: unknown): err is MongoServerError {
  return err instanceof MongoServerError && err.code === 11000;
}

function translateUnique(err: unknown): never {
  if (isDuplicateKey(err)) {
    const path = Object.keys((err.keyValue as object | undefined) ?? {})[0];
    const field = path?.startsWith('data.') ? path.slice('data.'.length) : undefined;
    throw new ConflictError(
      field ? `Another record already has this value of unique field "${field}".` : 'Unique constraint violated.',
      field ? { field } : undefined,
    );
  }
  throw err;
}

function toRecord(doc: RecordDocument): RecordDoc {
  const { _id, version, created_at, updated_at, data } = doc;
  return joinRecord({ id: _id, version, created_at, updated_at, data: data as RecordDoc });
}

function toDocument(record: RecordDoc): RecordDocument {
  const { id, ...rest } = splitRecord(record);
  return { _id: id, ...rest };
}

function wantedIndexes(collection: Collection): IndexDescription[] {
  const wanted: IndexDescription[] = [];
  for (const [field, def] of Object.entries(collection.fields)) {
    if (!def.indexed && !def.unique) continue;
    const path = fieldPath(field);
    wanted.push({ name: `ix:${field}`, key: { [path]: 1, _id: 1 } });
    if (def.unique) {
      wanted.push({ name: `ux:${field}`, key: { [path]: 1 }, unique: true, partialFilterExpression: { [path]: { $exists: true } } });
    }
  }
  return wanted;
}

export class MongoRecordStore implements RecordStore {
  /** `client` is closed by close() when given (the store then owns the connection). */
  constructor(
    private readonly db: Db,
    private readonly client?: MongoClient,
  ) {}

  /** Connects with majority write concern and creates the service's own indexes. */
  static async connect(url: string): Promise<MongoRecordStore> {
    const client = new MongoClient(url, { writeConcern: MAJORITY });
    await client.connect();
    const store = new MongoRecordStore(client.db(), client);
    await store.init();
    return store;
  }

  /** Creates the indexes of the service's own collections (idempotent). */
  async init(): Promise<void> {
    await this.db.collection<CollectionDocument>(COLLECTIONS).createIndex({ project: 1, 'collection.name': 1 }, { name: 'project_name' });
    await this.db.collection<IdempotencyDocument>(IDEMPOTENCY).createIndex({ expires_at: 1 }, { name: 'ttl', expireAfterSeconds: 0 });
  }

  private meta() {
    return this.db.collection<CollectionDocument>(COLLECTIONS, { writeConcern: MAJORITY });
  }
  private keys() {
    return this.db.collection<IdempotencyDocument>(IDEMPOTENCY, { writeConcern: MAJORITY });
  }
  private records(project: ProjectId, name: string) {
    return this.db.collection<RecordDocument>(`rec_${project}_${name}`, { writeConcern: MAJORITY });
  }

  async listCollections(project: ProjectId): Promise<Collection[]> {
    const docs = await this.meta().find({ project }).sort({ 'collection.name': 1 }).toArray();
    return docs.map((d) => d.collection);
  }

  async getCollection(project: ProjectId, name: string): Promise<Collection | null> {
    const doc = await this.meta().findOne({ _id: `${project}/${name}` });
    return doc?.collection ?? null;
  }

  private async syncIndexes(project: ProjectId, collection: Collection, dropUnwanted: boolean): Promise<void> {
    const records = this.records(project, collection.name);
    const wanted = wantedIndexes(collection);
    for (const spec of wanted) {
      try {
        await records.createIndex(spec.key, {
          name: spec.name,
          ...(spec.unique ? { unique: true, partialFilterExpression: spec.partialFilterExpression } : {}),
        });
      } catch (err) {
        translateUnique(err);
      }
    }
    if (!dropUnwanted) return;
    const names = new Set(wanted.map((w) => w.name));
    for (const name of Object.keys(await records.indexInformation())) {
      if ((name.startsWith('ix:') || name.startsWith('ux:')) && !names.has(name)) await records.dropIndex(name);
    }
  }

  async createCollection(project: ProjectId, collection: Collection): Promise<void> {
    try {
      await this.meta().insertOne({ _id: `${project}/${collection.name}`, project, collection });
    } catch (err) {
      if (isDuplicateKey(err)) throw new ConflictError(`Collection "${collection.name}" already exists.`, { name: collection.name });
      throw err;
    }
    const records = this.records(project, collection.name);
    await records.createIndex({ created_at: 1, _id: 1 }, { name: 'sys:created_at' });
    await records.createIndex({ updated_at: 1, _id: 1 }, { name: 'sys:updated_at' });
    await this.syncIndexes(project, collection, false);
  }

  async updateCollection(project: ProjectId, change: CollectionChange): Promise<boolean> {
    const { next, expectedRevision, removedFields } = change;
    const id = `${project}/${next.name}`;
    const current = await this.meta().findOne({ _id: id });
    if (!current || current.collection.revision !== expectedRevision) return false;
    // New (unique) indexes first: on duplicate values nothing has changed yet.
    await this.syncIndexes(project, next, false);
    const saved = await this.meta().findOneAndUpdate(
      { _id: id, 'collection.revision': expectedRevision },
      { $set: { collection: next } },
      { returnDocument: 'after' },
    );
    if (!saved) return false;
    if (removedFields.length > 0) {
      const unset: { [path: string]: '' } = Object.fromEntries(removedFields.map((f) => [fieldPath(f), '' as const]));
      await this.records(project, next.name).updateMany({}, { $unset: unset });
    }
    await this.syncIndexes(project, next, true);
    return true;
  }

  async deleteCollection(project: ProjectId, name: string): Promise<boolean> {
    const gone = await this.meta().deleteOne({ _id: `${project}/${name}` });
    await this.keys().deleteMany({ project, collection: name });
    await this.records(project, name).drop();
    return gone.deletedCount === 1;
  }

  /** Claims the key; returns the earlier result when the same request already holds it. */
  private async claimKey(project: ProjectId, collection: string, record: RecordDoc, claim: IdempotencyClaim): Promise<InsertResult | null> {
    const _id = `${project}/${collection}/${claim.key}`;
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await this.keys().insertOne({
          _id,
          project,
          collection,
          fingerprint: claim.fingerprint,
          record,
          expires_at: new Date(claim.expiresAt),
        });
        return null;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      const prior = await this.keys().findOne({ _id });
      if (prior && prior.expires_at > new Date(claim.now)) {
        if (prior.fingerprint !== claim.fingerprint) {
          throw new ConflictError('This Idempotency-Key was used with another request body.', { header: 'Idempotency-Key' });
        }
        return { record: prior.record, replayed: true };
      }
      await this.keys().deleteOne({ _id, expires_at: { $lte: new Date(claim.now) } });
    }
    throw new ConflictError('This Idempotency-Key is in use; retry.', { header: 'Idempotency-Key' });
  }

  async insertRecord(project: ProjectId, collection: Collection, record: RecordDoc, idempotency?: IdempotencyClaim): Promise<InsertResult> {
    if (idempotency) {
      const earlier = await this.claimKey(project, collection.name, record, idempotency);
      if (earlier) return earlier;
    }
    try {
      await this.records(project, collection.name).insertOne(toDocument(record));
    } catch (err) {
      if (idempotency) {
        await this.keys().deleteOne({ _id: `${project}/${collection.name}/${idempotency.key}`, fingerprint: idempotency.fingerprint });
      }
      translateUnique(err);
    }
    return { record, replayed: false };
  }

  async getRecord(project: ProjectId, collection: Collection, id: string): Promise<RecordDoc | null> {
    const doc = await this.records(project, collection.name).findOne({ _id: { $eq: id } });
    return doc ? toRecord(doc) : null;
  }

  async replaceRecord(project: ProjectId, collection: Collection, next: RecordDoc, expectedVersion: number): Promise<RecordDoc | null> {
    const { _id, version, updated_at, data } = toDocument(next);
    try {
      const after = await this.records(project, collection.name).findOneAndUpdate(
        { _id: { $eq: _id }, version: { $eq: expectedVersion } },
        { $set: { version, updated_at, data } },
        { returnDocument: 'after' },
      );
      return after ? toRecord(after) : null;
    } catch (err) {
      return translateUnique(err);
    }
  }

  async deleteRecord(project: ProjectId, collection: Collection, id: string, expectedVersion?: number): Promise<boolean> {
    const filter = expectedVersion === undefined ? { _id: { $eq: id } } : { _id: { $eq: id }, version: { $eq: expectedVersion } };
    const result = await this.records(project, collection.name).deleteOne(filter);
    return result.deletedCount === 1;
  }

  async queryRecords(project: ProjectId, collection: Collection, query: RecordQuery): Promise<RecordDoc[]> {
    const { predicate, orderBy, direction, after, limit } = query;
    const where = compileFilter(predicate, collection);
    const filter = after ? { $and: [where, compileKeyset(keysetPredicate(orderBy, direction, after), collection)] } : where;
    const cursor = this.records(project, collection.name)
      .find(filter, query.timeoutMs === undefined ? {} : { maxTimeMS: query.timeoutMs })
      .sort(sortSpec(orderBy, direction))
      .limit(limit);
    const records: RecordDoc[] = [];
    let bytes = 0;
    try {
      for await (const doc of cursor) {
        const record = toRecord(doc);
        records.push(record);
        if (query.maxBytes === undefined) continue;
        bytes += JSON.stringify(splitRecord(record).data).length;
        if (bytes >= query.maxBytes) break;
      }
    } catch (err) {
      // MaxTimeMSExpired: the server stopped the query at its time budget.
      if (err instanceof MongoServerError && err.code === 50) throw queryTimeout(query.timeoutMs ?? 0);
      throw err;
    }
    return records;
  }

  async ping(): Promise<void> {
    await this.db.command({ ping: 1 });
  }

  async close(): Promise<void> {
    await this.client?.close();
  }
}
