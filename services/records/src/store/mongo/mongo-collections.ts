/**
 * Collection definitions on MongoDB, and the indexes of each collection's records.
 *
 * Every change converges to the stored revision whatever the interleaving:
 * - a definition is first stored as a *pending claim* (invisible to readers), then leftover
 *   documents of an earlier collection of that name are dropped and the indexes are built, and
 *   only then is the definition published — a live collection never lacks its indexes;
 * - an update builds the new indexes, then saves with compare-and-set on the revision, and then
 *   syncs the indexes to whatever revision is stored *now* (re-read until it stops moving), so
 *   a losing or slower request never leaves an index behind nor drops one a newer revision wants;
 * - removed fields are recorded in the stored definition (`pending_unset`) in the same write
 *   as the revision, and cleared only after their values are gone, so a crash in between is
 *   finished by the next change; a record that loses a value gets a new version.
 */
import { ConflictError, isMongoIndexConflict, loadMongodb, type Collection, type ProjectId } from '@plinth/shared';
import type { Db, IndexDescription, MongoServerError, WriteConcernSettings } from 'mongodb';
import { fieldPath, type RecordDocument } from './mongo-filter';

export const COLLECTIONS = 'plinth_collections';

/** A pending claim older than this is taken to be left by a crashed create, and may be taken over. */
const STALE_CLAIM_MS = 60_000;

export interface CollectionDocument {
  _id: string;
  project: string;
  collection: Collection;
  /** Set while the collection is being created: readers never see it. */
  pending?: boolean;
  claimed_at?: Date;
  /** Fields whose values must still be removed from every record. */
  pending_unset?: string[];
}

/** Readers see only published definitions. */
export const PUBLISHED = { pending: { $ne: true } } as const;

export function isDuplicateKey(err: unknown): err is MongoServerError {
  return err instanceof loadMongodb().MongoServerError && err.code === 11000;
}

export function translateUnique(err: unknown): never {
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

/** The indexes a definition wants on its records; names start with `ix:`, `ic:`, `ux:` or `sys:`. */
export function wantedIndexes(collection: Collection): IndexDescription[] {
  const wanted: IndexDescription[] = [
    { name: 'sys:created_at', key: { created_at: 1, _id: 1 } },
    { name: 'sys:updated_at', key: { updated_at: 1, _id: 1 } },
  ];
  for (const [field, def] of Object.entries(collection.fields)) {
    if (!def.indexed && !def.unique) continue;
    const path = fieldPath(field);
    wanted.push({ name: `ix:${field}`, key: { [path]: 1, _id: 1 } });
    // `field == x` in the default order walks this one without a sort.
    wanted.push({ name: `ic:${field}`, key: { [path]: 1, created_at: 1, _id: 1 } });
    if (def.unique) {
      wanted.push({ name: `ux:${field}`, key: { [path]: 1 }, unique: true, partialFilterExpression: { [path]: { $exists: true } } });
    }
  }
  return wanted;
}

const OURS = /^(ix|ic|ux|sys):/;

export class MongoCollections {
  constructor(
    private readonly db: Db,
    private readonly writeConcern: WriteConcernSettings,
  ) {}

  meta() {
    return this.db.collection<CollectionDocument>(COLLECTIONS, { writeConcern: this.writeConcern });
  }
  records(project: ProjectId, name: string) {
    return this.db.collection<RecordDocument>(`rec_${project}_${name}`, { writeConcern: this.writeConcern });
  }

  /** Creates each wanted index; an index of that name with other options (an older release's) is replaced. */
  async createIndexes(project: ProjectId, name: string, wanted: IndexDescription[]): Promise<void> {
    const records = this.records(project, name);
    for (const spec of wanted) {
      const { key, ...options } = spec;
      try {
        await records.createIndex(key, options);
      } catch (err) {
        if (!isMongoIndexConflict(err)) translateUnique(err);
        await records.dropIndex(spec.name as string);
        try {
          await records.createIndex(key, options);
        } catch (again) {
          translateUnique(again);
        }
      }
    }
  }

  /**
   * Brings the records' indexes and values to the stored definition, re-reading it until it
   * stops moving. Drops an index only while the revision it was judged against is still stored.
   */
  async converge(project: ProjectId, name: string): Promise<void> {
    const id = `${project}/${name}`;
    for (let round = 0; round < 10; round++) {
      const stored = await this.meta().findOne({ _id: id, ...PUBLISHED });
      if (!stored) return;
      const wanted = wantedIndexes(stored.collection);
      await this.createIndexes(project, name, wanted);
      const unset = (stored.pending_unset ?? []).filter((f) => !Object.hasOwn(stored.collection.fields, f));
      if (unset.length > 0) {
        // The version moves too: a PATCH that read a record before the removal fails its
        // compare-and-set and re-reads, instead of writing the removed value back.
        await this.records(project, name).updateMany(
          { $or: unset.map((f) => ({ [fieldPath(f)]: { $exists: true } })) },
          { $unset: Object.fromEntries(unset.map((f) => [fieldPath(f), ''])), $inc: { version: 1 } },
        );
      }
      if ((stored.pending_unset ?? []).length > 0) {
        await this.meta().updateOne({ _id: id }, { $pull: { pending_unset: { $in: stored.pending_unset ?? [] } } });
      }
      const names = new Set(wanted.map((w) => w.name));
      const records = this.records(project, name);
      for (const existing of Object.keys(await records.indexInformation())) {
        if (!OURS.test(existing) || names.has(existing)) continue;
        const now = await this.meta().findOne({ _id: id });
        if (now?.collection.revision !== stored.collection.revision) break;
        await records.dropIndex(existing);
      }
      const after = await this.meta().findOne({ _id: id });
      if (!after || after.collection.revision === stored.collection.revision) return;
    }
  }

  /** `clearLeftovers` removes other state a dropped collection of that name may have left (idempotency keys). */
  async create(project: ProjectId, collection: Collection, now: Date, clearLeftovers: () => Promise<void>): Promise<void> {
    const id = `${project}/${collection.name}`;
    const claim: CollectionDocument = { _id: id, project, collection, pending: true, claimed_at: now };
    try {
      await this.meta().insertOne(claim);
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      // Take over only a claim a crashed create left behind; a live or published one is a conflict.
      const taken = await this.meta().findOneAndUpdate(
        { _id: id, pending: true, claimed_at: { $lt: new Date(now.getTime() - STALE_CLAIM_MS) } },
        { $set: { collection, claimed_at: now } },
      );
      if (!taken) throw new ConflictError(`Collection "${collection.name}" already exists.`, { name: collection.name });
    }
    // Leftovers of a dropped collection (an insert racing the drop re-creates it, without indexes).
    await this.records(project, collection.name).drop();
    await clearLeftovers();
    await this.createIndexes(project, collection.name, wantedIndexes(collection));
    const published = await this.meta().updateOne(
      { _id: id, pending: true, claimed_at: now },
      { $unset: { pending: '', claimed_at: '' } },
    );
    if (published.matchedCount === 0) throw new ConflictError(`Collection "${collection.name}" already exists.`, { name: collection.name });
  }

  async update(project: ProjectId, next: Collection, expectedRevision: number, removedFields: string[]): Promise<boolean> {
    const id = `${project}/${next.name}`;
    const current = await this.meta().findOne({ _id: id, ...PUBLISHED });
    if (!current || current.collection.revision !== expectedRevision) return false;
    // New (unique) indexes first: on duplicate values the definition has not changed.
    try {
      await this.createIndexes(project, next.name, wantedIndexes(next));
    } catch (err) {
      await this.converge(project, next.name);
      throw err;
    }
    const saved = await this.meta().updateOne(
      { _id: id, 'collection.revision': expectedRevision, ...PUBLISHED },
      { $set: { collection: next }, ...(removedFields.length > 0 ? { $addToSet: { pending_unset: { $each: removedFields } } } : {}) },
    );
    await this.converge(project, next.name);
    return saved.matchedCount === 1;
  }
}
