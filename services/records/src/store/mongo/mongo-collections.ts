/**
 * Collection definitions on MongoDB, and the indexes of each collection's records.
 *
 * Every change converges to the stored revision whatever the interleaving:
 * - a definition is first stored as a *pending claim* (invisible to readers), then leftover
 *   documents of an earlier collection of that name are dropped and the indexes are built, and
 *   only then is the definition published — a live collection never lacks its indexes; a create
 *   that fails after its claim deletes the claim, so the name is free at once;
 * - an update makes room (drops the query indexes only the old revision wants), builds the new
 *   revision's indexes (all new unique ones, and the others that fit under MongoDB's 64), then
 *   saves with compare-and-set on the revision, and then syncs the indexes to whatever revision
 *   is stored *now* (re-read until it stops moving; drops before builds), so a losing or slower
 *   request never leaves an index behind nor drops one a newer revision wants;
 * - every build is bounded: a majority commit quorum (a member down does not hold it) and one
 *   time budget per request (maxTimeMS), past which the request is a 503 with nothing changed;
 * - removed fields are recorded in the stored definition (`pending_unset`) in the same write
 *   as the revision, and cleared only after their values are gone, so a crash in between is
 *   finished by the next change; a record that loses a value gets a new version.
 */
import {
  ConflictError,
  dropMongoIndex,
  ensureMongoIndexes,
  indexFamily,
  listMongoIndexes,
  loadMongodb,
  PlinthError,
  UnavailableError,
  type Collection,
  type ProjectId,
  type WantedIndex,
} from '@plinth/shared';
import type { Db, MongoServerError, WriteConcernSettings } from 'mongodb';
import { fieldPath, type RecordDocument } from './mongo-filter';
import { uniqueConflict } from '../unique-conflict';
import { syncTextIndex } from './mongo-search';

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

/** The user field of the unique index a duplicate-key error names, if it is one. */
export function reportedField(err: MongoServerError): string | undefined {
  const path = Object.keys((err.keyValue as object | undefined) ?? {})[0];
  return path?.startsWith('data.') ? path.slice('data.'.length) : undefined;
}

export function translateUnique(err: unknown): never {
  if (isDuplicateKey(err)) throw uniqueConflict(reportedField(err));
  throw err;
}

/** The indexes a definition wants on its records; names start with `ix:`, `ic:`, `ux:` or `sys:`. */
export function wantedIndexes(collection: Collection): WantedIndex[] {
  const wanted: WantedIndex[] = [
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

/** MongoDB's limit of indexes on one collection, `_id_` included. */
const MAX_INDEXES = 64;

/** Over the time limit (MaxTimeMSExpired). */
export function isTimeLimit(err: unknown): boolean {
  return err instanceof loadMongodb().MongoServerError && err.code === 50;
}

/**
 * What a failed index build answers: duplicates of a new unique field are 409 (translateUnique),
 * a build past its time budget is 503 `index_build_timeout`, anything else MongoDB did not finish
 * (unreachable, a member down past the budget) 503 — never a raw 500. Nothing was changed.
 */
export function indexBuildFailure(err: unknown, budgetMs: number): never {
  if (err instanceof PlinthError) throw err;
  if (isDuplicateKey(err)) translateUnique(err);
  if (isTimeLimit(err)) {
    throw new PlinthError(
      'unavailable',
      `Building the collection's indexes took longer than ${budgetMs} ms and was stopped; nothing was changed. Retry, or see docs/deploy.md ("Index limits and builds") for large collections.`,
      { reason: 'index_build_timeout', timeout_ms: budgetMs },
    );
  }
  throw new UnavailableError('MongoDB did not finish preparing the collection\'s storage; nothing was changed. Try again shortly.');
}

const flag = (v: unknown): boolean => v === true || v === 1;

export class MongoCollections {
  constructor(
    private readonly db: Db,
    private readonly writeConcern: WriteConcernSettings,
    /** Time budget of the index builds of one create or change (maxTimeMS, summed over its builds). */
    private readonly indexBuildMs: number,
  ) {}

  meta() {
    return this.db.collection<CollectionDocument>(COLLECTIONS, { writeConcern: this.writeConcern });
  }
  records(project: ProjectId, name: string) {
    return this.db.collection<RecordDocument>(`rec_${project}_${name}`, { writeConcern: this.writeConcern });
  }

  /**
   * Builds `wanted` in one build bounded by what is left of `deadline`, committed at a majority of
   * voting members (one member down does not hold it); an index an older release left with
   * other options is replaced without a gap (ensureMongoIndexes).
   */
  private async build(project: ProjectId, name: string, wanted: WantedIndex[], deadline: number): Promise<void> {
    if (wanted.length === 0) return;
    try {
      // A spent budget still lets a build with nothing to create through; anything else stops at once.
      await ensureMongoIndexes(this.records(project, name), wanted, { maxTimeMS: Math.max(1, deadline - Date.now()), commitQuorum: 'majority' });
    } catch (err) {
      indexBuildFailure(err, this.indexBuildMs);
    }
  }

  /**
   * Brings the records' indexes and values to the stored definition, re-reading it until it
   * stops moving. Drops first, so the builds have room under MongoDB's 64 indexes; drops an
   * index only while the revision it was judged against is still stored.
   */
  async converge(project: ProjectId, name: string, deadline = Date.now() + this.indexBuildMs): Promise<void> {
    const id = `${project}/${name}`;
    const records = this.records(project, name);
    for (let round = 0; round < 10; round++) {
      const stored = await this.meta().findOne({ _id: id, ...PUBLISHED });
      if (!stored) return;
      const wanted = wantedIndexes(stored.collection);
      const names = new Set(wanted.map((w) => w.name));
      for (const existing of await listMongoIndexes(records)) {
        const server = existing.name as string;
        if (!OURS.test(server) || names.has(indexFamily(server))) continue;
        const now = await this.meta().findOne({ _id: id });
        if (now?.collection.revision !== stored.collection.revision) break;
        await dropMongoIndex(records, server);
      }
      const unset = (stored.pending_unset ?? []).filter((f) => !Object.hasOwn(stored.collection.fields, f));
      if (unset.length > 0) {
        // The version moves too: a PATCH that read a record before the removal fails its
        // compare-and-set and re-reads, instead of writing the removed value back.
        await records.updateMany(
          { $or: unset.map((f) => ({ [fieldPath(f)]: { $exists: true } })) },
          { $unset: Object.fromEntries(unset.map((f) => [fieldPath(f), ''])), $inc: { version: 1 } },
        );
      }
      if ((stored.pending_unset ?? []).length > 0) {
        await this.meta().updateOne({ _id: id }, { $pull: { pending_unset: { $in: stored.pending_unset ?? [] } } });
      }
      await this.build(project, name, wanted, deadline);
      await syncTextIndex(records, stored.collection, deadline - Date.now()).catch((err: unknown) => indexBuildFailure(err, this.indexBuildMs));
      const after = await this.meta().findOne({ _id: id });
      if (!after || after.collection.revision === stored.collection.revision) return;
    }
  }

  /** `clearLeftovers` removes other state a dropped collection of that name may have left (idempotency keys). */
  async create(project: ProjectId, collection: Collection, now: Date, clearLeftovers: () => Promise<void>): Promise<void> {
    const id = `${project}/${collection.name}`;
    const deadline = Date.now() + this.indexBuildMs;
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
    try {
      // Leftovers of a dropped collection (an insert racing the drop re-creates it, without indexes).
      await this.records(project, collection.name).drop();
      await clearLeftovers();
      await this.build(project, collection.name, wantedIndexes(collection), deadline);
      await syncTextIndex(this.records(project, collection.name), collection, deadline - Date.now());
    } catch (err) {
      // The name is free again at once (not after STALE_CLAIM_MS), and the error is a 4xx/503.
      await this.releaseClaim(project, collection.name, now);
      indexBuildFailure(err, this.indexBuildMs);
    }
    const published = await this.meta().updateOne(
      { _id: id, pending: true, claimed_at: now },
      { $unset: { pending: '', claimed_at: '' } },
    );
    if (published.matchedCount === 0) {
      // The claim was purged with its project meanwhile (or taken over): storage nobody names goes.
      if (!(await this.meta().findOne({ _id: id }))) await this.records(project, collection.name).drop();
      throw new ConflictError(`Collection "${collection.name}" already exists.`, { name: collection.name });
    }
  }

  /** Deletes this create's claim and what it built; best effort (a claim left behind is taken over later). */
  private async releaseClaim(project: ProjectId, name: string, claimedAt: Date): Promise<void> {
    try {
      const released = await this.meta().deleteOne({ _id: `${project}/${name}`, pending: true, claimed_at: claimedAt });
      if (released.deletedCount === 1) await this.records(project, name).drop();
    } catch {
      // MongoDB is failing: the claim stays until another create takes it over as stale.
    }
  }

  async update(project: ProjectId, next: Collection, expectedRevision: number, removedFields: string[]): Promise<boolean> {
    const id = `${project}/${next.name}`;
    const deadline = Date.now() + this.indexBuildMs;
    const current = await this.meta().findOne({ _id: id, ...PUBLISHED });
    if (!current || current.collection.revision !== expectedRevision) return false;
    try {
      await this.build(project, next.name, await this.makeRoom(project, next), deadline);
    } catch (err) {
      await this.converge(project, next.name, deadline).catch(() => {});
      throw err;
    }
    const saved = await this.meta().updateOne(
      { _id: id, 'collection.revision': expectedRevision, ...PUBLISHED },
      { $set: { collection: next }, ...(removedFields.length > 0 ? { $addToSet: { pending_unset: { $each: removedFields } } } : {}) },
    );
    await this.converge(project, next.name, deadline);
    return saved.matchedCount === 1;
  }

  /**
   * Before a change is saved: returns what to build before the save — every new unique index
   * (on duplicate values nothing changes), then as many new query indexes as fit under MongoDB's
   * limit beside the indexes there (one spare, for a replacement). Only when they would not fit
   * does it first drop query indexes (never unique ones) that only the current revision wants;
   * what is left is built right after the save, once the old unique indexes are gone. So a
   * change that swaps fields never needs more than 64 indexes at once.
   */
  private async makeRoom(project: ProjectId, next: Collection): Promise<WantedIndex[]> {
    const records = this.records(project, next.name);
    const wanted = wantedIndexes(next);
    const names = new Set(wanted.map((w) => w.name));
    const existing = await listMongoIndexes(records);
    const families = existing.map((i) => indexFamily(i.name as string));
    const missing = wanted.filter((w) => !families.includes(w.name));
    let count = existing.length;
    for (const i of existing) {
      if (count + missing.length + 1 <= MAX_INDEXES) break;
      const server = i.name as string;
      if (!OURS.test(server) || names.has(indexFamily(server)) || flag(i.unique)) continue;
      await dropMongoIndex(records, server);
      count--;
    }
    const unique = missing.filter((w) => w.unique);
    let room = MAX_INDEXES - 1 - count - unique.length;
    return [...unique, ...missing.filter((w) => !w.unique && room-- > 0)];
  }
}
