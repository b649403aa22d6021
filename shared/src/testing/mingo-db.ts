/**
 * A MongoDB `Db` stand-in that evaluates every filter, sort, projection and update with mingo
 * (docs/architecture.md "Ports and adapters"): the mongo adapters run their whole contract suite against it on machines
 * without a MongoDB server, so every query they translate is executed with MongoDB semantics.
 *
 * It behaves like the server where our adapters could tell the difference:
 * - every stored document goes through the driver's own BSON serializer and back, so a key
 *   `_bsontype`, a NUL byte in a key, a DBRef-shaped object, nesting beyond 100 levels and a
 *   document over 16 MiB fail (or change) as they do against a server;
 * - unique indexes raise the driver's E11000 `MongoServerError`; an index whose name or options
 *   conflict with an existing one raises code 85/86; `_id_` is listed by indexInformation;
 * - updateOne reports `modifiedCount: 0` for a no-op, and an update without `$` operators fails;
 * - sessions: `db.client.startSession().withTransaction()` is all-or-nothing and retries on
 *   transient errors; an operation inside it without the session fails loudly;
 * - failures and holds can be injected (mingo-faults.ts) to force errors and interleavings.
 *
 * - strings compare in UTF-8 byte order (code point order) in filters and sorts, as on the
 *   server, not in JavaScript's UTF-16 code unit order (they differ for U+E000–U+FFFF against
 *   characters above U+FFFF);
 * - filters are evaluated as the server evaluates what the driver sends (mingo-filter.ts):
 *   BSON-encoded, regular expressions over code points, `$elemMatch` on scalars comparing
 *   elements whole;
 * - reads outside a transaction see none of its writes until it commits, and writes outside it
 *   to a collection it has written wait until it ends;
 * - the index catalog, index builds (commit quorum, maxTimeMS) and `notablescan` follow the
 *   server (mingo-server.ts: at most 64 indexes, code 67; index signatures; aborted builds).
 *
 * Test-only. It implements the subset of the driver our adapters use; calling anything else
 * throws, so an adapter that starts using a new driver method fails loudly here.
 */
import { MongoServerError, type Db, type Document } from 'mongodb';
import { clone, getPath, sameBytes, toStored, utf8Ordered, withId } from './mingo-bson';
import { scored, textSearch } from './mingo-text';
import { FakeCursor } from './mingo-cursor';
import { SERVER_QUERY_OPTIONS, serverFilter } from './mingo-filter';
import { Aggregator, Query, find as mingoFind, update as mingoUpdate } from 'mingo';
import { FakeSession, MingoControl, registerControl, type FaultOp } from './mingo-faults';
import { admitIndex, namespaceNotFound, requireIndexedPlan, runIndexBuild, type BuildOptions } from './mingo-server';
import { requireOperators, sessionOf, type Doc, type Filter, type FindOptions, type IndexOptions, type IndexSpec, type UpdateOptions, type WriteOptions } from './mingo-options';

export { callCount, holdNext, injectFault, stallCommits, transientError, type FaultOp, type FaultSpec } from './mingo-faults';
export { MAX_INDEXES_PER_COLLECTION, nextQuorumStall, noTableScan, setReplicaSet } from './mingo-server';

export class FakeCollection {
  private docs: Doc[] = [];
  private indexes: IndexSpec[] = [];
  constructor(
    readonly collectionName: string,
    private readonly control: MingoControl,
  ) {}

  /** Entry of every operation: counts it, throws an injected fault, waits on a hold. */
  private async enter(op: FaultOp, opts?: { session?: unknown; maxTimeMS?: number }): Promise<FakeSession | undefined> {
    this.control.beforeOp(op, this.collectionName, opts?.session, opts?.maxTimeMS);
    await this.control.maybeHold(op, this.collectionName);
    const session = sessionOf(opts);
    if (op !== 'find') await this.waitForOtherTransaction(session);
    return session;
  }

  /**
   * A transaction's writes, until it commits: the documents as they were before its first
   * write here, which every read outside it sees (the server's reads never see uncommitted
   * writes: https://www.mongodb.com/docs/manual/core/transactions/#transactions-and-atomicity).
   */
  private uncommitted: { session: FakeSession; before: Doc[]; ended: Promise<void> } | null = null;

  /** What a read with this session sees: a transaction's own writes only inside it. */
  private visible(session: FakeSession | undefined): Doc[] {
    return this.uncommitted && this.uncommitted.session !== session ? this.uncommitted.before : this.docs;
  }

  /**
   * A write outside a transaction that has written here waits until it ends, as the server
   * makes a write to a document a transaction holds wait
   * (https://www.mongodb.com/docs/manual/core/transactions-production-consideration/#in-progress-transactions-and-write-conflicts);
   * the stand-in waits for the whole collection, not per document.
   */
  private async waitForOtherTransaction(session: FakeSession | undefined): Promise<void> {
    while (this.uncommitted && this.uncommitted.session !== session) await this.uncommitted.ended;
  }

  /** Records how to undo a write when it is made inside a transaction. */
  private journal(session: FakeSession | undefined): void {
    if (!session?.undo) return;
    if (!this.uncommitted) {
      const ended = session.attemptEnded();
      this.uncommitted = { session, before: this.docs.slice(), ended };
      void ended.then(() => (this.uncommitted = null));
    }
    const docs = this.docs.slice();
    const indexes = this.indexes.slice();
    session.undo.push(() => {
      this.docs = docs;
      this.indexes = indexes;
    });
  }

  private matching(filter: Filter, docs: Doc[] = this.docs): Doc[] {
    const text = textSearch(filter, this.indexes);
    if (text) return this.matching(text.rest, docs).filter((d) => text.score(d) !== null);
    requireIndexedPlan(this.control, this.collectionName, filter, this.indexes);
    const q = new Query(serverFilter(filter), SERVER_QUERY_OPTIONS);
    return docs.filter((d) => q.test(utf8Ordered(d) as Doc));
  }

  private duplicateError(ix: IndexSpec, fields: string[], doc: Doc): MongoServerError {
    return new MongoServerError({
      message: `E11000 duplicate key error collection: ${this.collectionName} index: ${ix.name}`,
      code: 11000,
      keyPattern: ix.key,
      keyValue: Object.fromEntries(fields.map((f) => [f, getPath(doc, f)])),
    });
  }

  private checkUnique(candidate: Doc, exceptId?: unknown): void {
    if (this.docs.some((o) => o._id === candidate._id && o._id !== exceptId)) {
      throw this.duplicateError({ name: '_id_', key: { _id: 1 }, unique: true }, ['_id'], candidate);
    }
    for (const ix of this.indexes) {
      if (!ix.unique) continue;
      if (ix.partialFilterExpression && !new Query(ix.partialFilterExpression).test(candidate)) continue;
      const fields = Object.keys(ix.key);
      const key = JSON.stringify(fields.map((f) => getPath(candidate, f) ?? null));
      for (const other of this.docs) {
        if (exceptId !== undefined && other._id === exceptId) continue;
        if (ix.partialFilterExpression && !new Query(ix.partialFilterExpression).test(other)) continue;
        if (JSON.stringify(fields.map((f) => getPath(other, f) ?? null)) === key) throw this.duplicateError(ix, fields, candidate);
      }
    }
  }

  private checkExisting(ix: IndexSpec): void {
    const fields = Object.keys(ix.key);
    const seen = new Set<string>();
    for (const d of this.docs) {
      if (ix.partialFilterExpression && !new Query(ix.partialFilterExpression).test(d)) continue;
      const key = JSON.stringify(fields.map((f) => getPath(d, f) ?? null));
      if (seen.has(key)) throw this.duplicateError(ix, fields, d);
      seen.add(key);
    }
  }

  async createIndex(key: IndexSpec['key'], opts: IndexOptions & WriteOptions = {}): Promise<string> {
    if (!opts.signal) {
      // Every build is one createIndexes command: it waits for its commit quorum.
      const [name] = await this.createIndexes([{ key, ...opts }], opts);
      return name as string;
    }
    const session = await this.enter('createIndex', opts);
    if (opts.signal?.aborted) throw new Error('mingo-db: index build aborted');
    const name = opts.name ?? Object.entries(key).map(([k, v]) => `${k}_${v}`).join('_');
    const spec: IndexSpec = {
      name,
      key,
      unique: opts.unique ?? false,
      ...(opts.sparse ? { sparse: true } : {}),
      ...(opts.partialFilterExpression ? { partialFilterExpression: opts.partialFilterExpression } : {}),
      ...(opts.expireAfterSeconds !== undefined ? { expireAfterSeconds: opts.expireAfterSeconds } : {}),
    };
    if (admitIndex(this.collectionName, this.indexes, spec) === 'exists') return name;
    // Like MongoDB, building a unique index over existing duplicates fails with E11000.
    if (spec.unique) this.checkExisting(spec);
    this.journal(session);
    this.indexes.push(spec);
    return name;
  }
  /** One build of every spec: bounded by `maxTimeMS`, committed at its commit quorum (mingo-server.ts). */
  async createIndexes(specs: Array<{ key: IndexSpec['key'] } & IndexOptions>, opts: WriteOptions & BuildOptions = {}): Promise<string[]> {
    const added: string[] = [];
    const { maxTimeMS, commitQuorum, ...write } = opts;
    return runIndexBuild(
      this.control,
      { maxTimeMS, commitQuorum },
      async (signal) => {
        const names: string[] = [];
        for (const { key, ...s } of specs) {
          const existed = this.indexes.some((i) => i.name === s.name);
          names.push(await this.createIndex(key, { ...s, ...write, signal }));
          if (!existed) added.push(names[names.length - 1] as string);
        }
        return names;
      },
      () => {
        this.indexes = this.indexes.filter((i) => !added.includes(i.name));
      },
    );
  }
  async dropIndex(name: string, opts: WriteOptions = {}): Promise<void> {
    const session = await this.enter('dropIndex', opts);
    if (!this.indexes.some((i) => i.name === name)) {
      throw new MongoServerError({ message: `index not found with name [${name}]`, code: 27, codeName: 'IndexNotFound' });
    }
    this.journal(session);
    this.indexes = this.indexes.filter((i) => i.name !== name);
  }
  async indexInformation(): Promise<{ [name: string]: Array<[string, unknown]> }> {
    return { _id_: [['_id', 1]], ...Object.fromEntries(this.indexes.map((i) => [i.name, Object.entries(i.key)])) };
  }
  /** Like listIndexes().toArray(): each index with its options. */
  listIndexes(): { toArray(): Promise<Document[]> } {
    return {
      toArray: async () => {
        await this.enter('listIndexes');
        // A collection exists here while it holds documents or indexes (mingo-server.ts).
        if (!this.exists()) throw namespaceNotFound(this.collectionName);
        const all = [{ v: 2, key: { _id: 1 }, name: '_id_' }, ...this.indexes.map((i) => ({ v: 2, ...i, unique: i.unique || undefined }))];
        return all.map((i) => JSON.parse(JSON.stringify(i)) as Document);
      },
    };
  }

  async insertOne(doc: Doc, opts: WriteOptions = {}): Promise<{ acknowledged: true; insertedId: unknown }> {
    const session = await this.enter('insertOne', opts);
    const d = toStored(withId(doc));
    this.checkUnique(d);
    this.journal(session);
    this.docs.push(d);
    doc._id = d._id;
    return { acknowledged: true, insertedId: d._id };
  }
  async insertMany(docs: Doc[], opts: WriteOptions = {}): Promise<{ acknowledged: true; insertedCount: number }> {
    const session = await this.enter('insertMany', opts);
    const stored: Doc[] = [];
    for (const doc of docs) {
      const d = toStored(withId(doc));
      this.checkUnique(d);
      if (stored.some((s) => s._id === d._id)) throw this.duplicateError({ name: '_id_', key: { _id: 1 }, unique: true }, ['_id'], d);
      stored.push(d);
    }
    this.journal(session);
    this.docs.push(...stored);
    return { acknowledged: true, insertedCount: docs.length };
  }
  async findOne(filter: Filter = {}, opts: FindOptions = {}): Promise<Doc | null> {
    const [first] = await this.find(filter, { ...opts, limit: 1 }).toArray();
    return first ?? null;
  }
  find(filter: Filter = {}, opts: FindOptions = {}): FakeCursor {
    const text = textSearch(filter, this.indexes); // `$text`: mingo-text.ts
    const c = new FakeCursor(async (maxTimeMS) => {
      const session = await this.enter('find', { ...opts, maxTimeMS: maxTimeMS ?? opts.maxTimeMS });
      requireIndexedPlan(this.control, this.collectionName, text ? text.rest : filter, this.indexes);
      return text ? scored(text, this.visible(session)) : this.visible(session);
    }, text ? text.rest : filter);
    if (opts.sort) c.sort(opts.sort);
    if (opts.skip) c.skip(opts.skip);
    if (opts.limit) c.limit(opts.limit);
    if (opts.projection) c.project(opts.projection);
    return c;
  }
  /** A pipeline whose first stage is `$match` (evaluated as find's filter is); the rest by mingo. */
  aggregate(pipeline: Document[], opts: FindOptions = {}): { toArray(): Promise<Doc[]> } {
    const [match, ...rest] = pipeline;
    if (!match || !('$match' in match)) throw new Error('mingo stand-in: an aggregation starts with $match');
    return {
      toArray: async () => {
        const session = await this.enter('find', opts);
        return new Aggregator(rest).run(this.matching(match.$match as Filter, this.visible(session)).map(clone)) as Doc[];
      },
    };
  }
  async countDocuments(filter: Filter = {}, opts: FindOptions = {}): Promise<number> {
    const session = await this.enter('find', opts);
    return this.matching(filter, this.visible(session)).length;
  }

  private applyUpdate(target: Doc, update: Document): Doc {
    const next = clone(target);
    mingoUpdate(next, update);
    const stored = toStored(next);
    this.checkUnique(stored, target._id);
    return stored;
  }

  private async updateFirst(op: FaultOp, filter: Filter, update: Document, opts: UpdateOptions): Promise<{ before: Doc | null; after: Doc | null }> {
    requireOperators(update);
    const session = await this.enter(op, opts);
    let candidates = this.matching(filter);
    if (opts.sort) candidates = mingoFind(candidates, {}).sort(opts.sort).all() as Doc[];
    const target = candidates[0];
    const { $setOnInsert, ...rest } = update as { $setOnInsert?: Document };
    if (!target) {
      if (!opts.upsert) return { before: null, after: null };
      const seed: Doc = {};
      for (const [k, v] of Object.entries(filter)) if (!k.startsWith('$') && (v === null || typeof v !== 'object')) seed[k] = v;
      const created = toStored(withId({ ...seed, ...($setOnInsert ?? {}) }));
      const next = Object.keys(rest).length > 0 ? this.applyUpdate(created, rest) : created;
      this.checkUnique(next);
      this.journal(session);
      this.docs.push(next);
      return { before: null, after: next };
    }
    const next = Object.keys(rest).length > 0 ? this.applyUpdate(target, rest) : target;
    this.journal(session);
    this.docs[this.docs.indexOf(target)] = next;
    return { before: target, after: next };
  }

  async findOneAndUpdate(filter: Filter, update: Document, opts: UpdateOptions = {}): Promise<Doc | null> {
    const { before, after } = await this.updateFirst('findOneAndUpdate', filter, update, opts);
    const out = opts.returnDocument === 'after' ? after : before;
    return out ? clone(out) : null;
  }
  async updateOne(filter: Filter, update: Document, opts: UpdateOptions = {}): Promise<{ matchedCount: number; modifiedCount: number; upsertedCount: number }> {
    const { before, after } = await this.updateFirst('updateOne', filter, update, opts);
    if (before && after) return { matchedCount: 1, modifiedCount: sameBytes(before, after) ? 0 : 1, upsertedCount: 0 };
    return { matchedCount: 0, modifiedCount: 0, upsertedCount: after ? 1 : 0 };
  }
  async updateMany(filter: Filter, update: Document, opts: WriteOptions = {}): Promise<{ matchedCount: number; modifiedCount: number }> {
    requireOperators(update);
    const session = await this.enter('updateMany', opts);
    const targets = this.matching(filter);
    const next = targets.map((t) => this.applyUpdate(t, update));
    this.journal(session);
    let modified = 0;
    targets.forEach((t, i) => {
      const n = next[i] as Doc;
      if (!sameBytes(t, n)) modified++;
      this.docs[this.docs.indexOf(t)] = n;
    });
    return { matchedCount: targets.length, modifiedCount: modified };
  }
  async findOneAndDelete(filter: Filter, opts: WriteOptions = {}): Promise<Doc | null> {
    const session = await this.enter('findOneAndDelete', opts);
    return this.removeFirst(filter, session);
  }
  private removeFirst(filter: Filter, session: FakeSession | undefined): Doc | null {
    const [target] = this.matching(filter);
    if (!target) return null;
    this.journal(session);
    this.docs = this.docs.filter((d) => d !== target);
    return clone(target);
  }
  async deleteOne(filter: Filter, opts: WriteOptions = {}): Promise<{ deletedCount: number }> {
    const session = await this.enter('deleteOne', opts);
    return { deletedCount: this.removeFirst(filter, session) ? 1 : 0 };
  }
  async deleteMany(filter: Filter, opts: WriteOptions = {}): Promise<{ deletedCount: number }> {
    const session = await this.enter('deleteMany', opts);
    const targets = new Set(this.matching(filter));
    this.journal(session);
    this.docs = this.docs.filter((d) => !targets.has(d));
    return { deletedCount: targets.size };
  }
  async drop(opts: WriteOptions = {}): Promise<boolean> {
    const session = await this.enter('drop', opts);
    this.journal(session);
    this.docs = [];
    this.indexes = [];
    return true;
  }
  /** Whether the collection holds documents or indexes (the server would list it). */
  exists(): boolean {
    return this.docs.length > 0 || this.indexes.length > 0;
  }
}

/** A fresh, empty fake database. Cast to the driver's `Db` for the adapter under test. */
export function createMingoDb(): Db {
  const control = new MingoControl();
  const collections = new Map<string, FakeCollection>();
  const fake = {
    databaseName: 'mingo',
    client: {
      startSession: () => new FakeSession(control),
    },
    collection(name: string): FakeCollection {
      let c = collections.get(name);
      if (!c) collections.set(name, (c = new FakeCollection(name, control)));
      return c;
    },
    listCollections(filter: Document = {}) {
      const names = [...collections.entries()].filter(([n, c]) => c.exists() && new Query(filter).test({ name: n })).map(([n]) => n);
      return { toArray: async () => names.map((name) => ({ name, type: 'collection' })) };
    },
    async command(cmd: Document): Promise<Document> {
      if ('ping' in cmd) return { ok: 1 };
      throw new Error(`mingo-db: command not supported: ${Object.keys(cmd).join(',')}`);
    },
  };
  const db = new Proxy(fake, {
    get(target, prop, receiver) {
      if (prop in target || typeof prop === 'symbol' || prop === 'then') return Reflect.get(target, prop, receiver);
      throw new Error(`mingo-db: Db.${String(prop)} is not supported by the test fake`);
    },
  });
  registerControl(db, control);
  return db as unknown as Db;
}
