/**
 * A MongoDB `Db` stand-in that evaluates every filter, sort, projection and update with mingo
 * (DESIGN.md §3): the mongo adapters run their whole contract suite against it on machines
 * without a MongoDB server, so every query they translate is executed with MongoDB semantics.
 * Unique indexes are enforced and raise the driver's own E11000 `MongoServerError`.
 *
 * Test-only. It implements the subset of the driver our adapters use; calling anything else
 * throws, so an adapter that starts using a new driver method fails loudly here.
 */
import { MongoServerError, type Db, type Document } from 'mongodb';
import { Query, find as mingoFind, update as mingoUpdate } from 'mingo';

type Doc = Document & { _id?: unknown };
type Filter = Document;
type Sort = { [field: string]: 1 | -1 };

interface IndexSpec {
  name: string;
  key: { [field: string]: 1 | -1 | string };
  unique: boolean;
  partialFilterExpression?: Filter;
}

let nextObjectId = 1;

function clone<T>(v: T): T {
  return structuredClone(v);
}

function getPath(doc: Doc, path: string): unknown {
  let cur: unknown = doc;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as { [k: string]: unknown })[part];
  }
  return cur;
}

class FakeCursor {
  private sortSpec: Sort | undefined;
  private limitN = 0;
  private skipN = 0;
  private proj: Document | undefined;
  constructor(
    private readonly docs: () => Doc[],
    private readonly filter: Filter,
  ) {}
  sort(spec: Sort): this {
    this.sortSpec = spec;
    return this;
  }
  limit(n: number): this {
    this.limitN = n;
    return this;
  }
  skip(n: number): this {
    this.skipN = n;
    return this;
  }
  project(p: Document): this {
    this.proj = p;
    return this;
  }
  async toArray(): Promise<Doc[]> {
    let c = mingoFind(this.docs(), this.filter, this.proj);
    if (this.sortSpec) c = c.sort(this.sortSpec);
    if (this.skipN) c = c.skip(this.skipN);
    if (this.limitN) c = c.limit(this.limitN);
    return clone(c.all() as Doc[]);
  }
  async *[Symbol.asyncIterator](): AsyncGenerator<Doc> {
    for (const d of await this.toArray()) yield d;
  }
}

interface FindOptions {
  sort?: Sort;
  limit?: number;
  skip?: number;
  projection?: Document;
}
interface UpdateOptions {
  upsert?: boolean;
  returnDocument?: 'before' | 'after';
  sort?: Sort;
}

export class FakeCollection {
  private docs: Doc[] = [];
  private indexes: IndexSpec[] = [];
  constructor(readonly collectionName: string) {}

  private matching(filter: Filter): Doc[] {
    const q = new Query(filter);
    return this.docs.filter((d) => q.test(d));
  }

  private checkUnique(candidate: Doc, exceptId?: unknown): void {
    for (const ix of this.indexes) {
      if (!ix.unique) continue;
      if (ix.partialFilterExpression && !new Query(ix.partialFilterExpression).test(candidate)) continue;
      const fields = Object.keys(ix.key);
      const key = JSON.stringify(fields.map((f) => getPath(candidate, f) ?? null));
      for (const other of this.docs) {
        if (exceptId !== undefined && other._id === exceptId) continue;
        if (ix.partialFilterExpression && !new Query(ix.partialFilterExpression).test(other)) continue;
        if (JSON.stringify(fields.map((f) => getPath(other, f) ?? null)) === key) {
          throw new MongoServerError({
            message: `E11000 duplicate key error collection: ${this.collectionName} index: ${ix.name}`,
            code: 11000,
            keyValue: Object.fromEntries(fields.map((f) => [f, getPath(candidate, f)])),
          });
        }
      }
    }
  }

  private checkExisting(ix: IndexSpec): void {
    const fields = Object.keys(ix.key);
    const seen = new Set<string>();
    for (const d of this.docs) {
      if (ix.partialFilterExpression && !new Query(ix.partialFilterExpression).test(d)) continue;
      const key = JSON.stringify(fields.map((f) => getPath(d, f) ?? null));
      if (seen.has(key)) {
        throw new MongoServerError({
          message: `E11000 duplicate key error collection: ${this.collectionName} index: ${ix.name}`,
          code: 11000,
          keyValue: Object.fromEntries(fields.map((f) => [f, getPath(d, f)])),
        });
      }
      seen.add(key);
    }
  }

  async createIndex(key: IndexSpec['key'], opts: { unique?: boolean; name?: string; partialFilterExpression?: Filter } = {}): Promise<string> {
    const name = opts.name ?? Object.entries(key).map(([k, v]) => `${k}_${v}`).join('_');
    if (!this.indexes.some((i) => i.name === name)) {
      const spec: IndexSpec = { name, key, unique: opts.unique ?? false, partialFilterExpression: opts.partialFilterExpression };
      // Like MongoDB, building a unique index over existing duplicates fails with E11000.
      if (spec.unique) this.checkExisting(spec);
      this.indexes.push(spec);
    }
    return name;
  }
  async createIndexes(specs: Array<{ key: IndexSpec['key']; name?: string; unique?: boolean; partialFilterExpression?: Filter }>): Promise<string[]> {
    const names: string[] = [];
    for (const s of specs) names.push(await this.createIndex(s.key, s));
    return names;
  }
  async dropIndex(name: string): Promise<void> {
    this.indexes = this.indexes.filter((i) => i.name !== name);
  }
  async indexInformation(): Promise<{ [name: string]: Array<[string, unknown]> }> {
    return Object.fromEntries(this.indexes.map((i) => [i.name, Object.entries(i.key)]));
  }

  async insertOne(doc: Doc): Promise<{ acknowledged: true; insertedId: unknown }> {
    const d = clone(doc);
    d._id ??= `oid_${nextObjectId++}`;
    if (this.docs.some((o) => o._id === d._id)) {
      throw new MongoServerError({ message: 'E11000 duplicate key error index: _id_', code: 11000 });
    }
    this.checkUnique(d);
    this.docs.push(d);
    doc._id = d._id;
    return { acknowledged: true, insertedId: d._id };
  }
  async insertMany(docs: Doc[]): Promise<{ acknowledged: true; insertedCount: number }> {
    for (const d of docs) await this.insertOne(d);
    return { acknowledged: true, insertedCount: docs.length };
  }
  async findOne(filter: Filter = {}, opts: FindOptions = {}): Promise<Doc | null> {
    const [first] = await this.find(filter, { ...opts, limit: 1 }).toArray();
    return first ?? null;
  }
  find(filter: Filter = {}, opts: FindOptions = {}): FakeCursor {
    const c = new FakeCursor(() => this.docs, filter);
    if (opts.sort) c.sort(opts.sort);
    if (opts.skip) c.skip(opts.skip);
    if (opts.limit) c.limit(opts.limit);
    if (opts.projection) c.project(opts.projection);
    return c;
  }
  async countDocuments(filter: Filter = {}): Promise<number> {
    return this.matching(filter).length;
  }

  private applyUpdate(target: Doc, update: Document): Doc {
    const next = clone(target);
    mingoUpdate(next, update);
    this.checkUnique(next, target._id);
    return next;
  }

  async findOneAndUpdate(filter: Filter, update: Document, opts: UpdateOptions = {}): Promise<Doc | null> {
    let candidates = this.matching(filter);
    if (opts.sort) candidates = mingoFind(candidates, {}).sort(opts.sort).all() as Doc[];
    const target = candidates[0];
    if (!target) {
      if (!opts.upsert) return null;
      const seed: Doc = {};
      for (const [k, v] of Object.entries(filter)) if (!k.startsWith('$') && (v === null || typeof v !== 'object')) seed[k] = v;
      const { $setOnInsert, ...rest } = update as { $setOnInsert?: Document };
      const created = this.applyUpdate({ ...seed, ...($setOnInsert ?? {}) }, rest);
      await this.insertOne(created);
      return opts.returnDocument === 'after' ? clone(created) : null;
    }
    const { $setOnInsert: _ignored, ...rest } = update as { $setOnInsert?: Document };
    const next = this.applyUpdate(target, rest);
    this.docs[this.docs.indexOf(target)] = next;
    return clone(opts.returnDocument === 'after' ? next : target);
  }
  async updateOne(filter: Filter, update: Document, opts: UpdateOptions = {}): Promise<{ matchedCount: number; modifiedCount: number; upsertedCount: number }> {
    const existed = this.matching(filter).length > 0;
    const r = await this.findOneAndUpdate(filter, update, { ...opts, returnDocument: 'after' });
    if (existed) return { matchedCount: 1, modifiedCount: 1, upsertedCount: 0 };
    return { matchedCount: 0, modifiedCount: 0, upsertedCount: r ? 1 : 0 };
  }
  async updateMany(filter: Filter, update: Document): Promise<{ matchedCount: number; modifiedCount: number }> {
    const targets = this.matching(filter);
    for (const t of targets) this.docs[this.docs.indexOf(t)] = this.applyUpdate(t, update);
    return { matchedCount: targets.length, modifiedCount: targets.length };
  }
  async findOneAndDelete(filter: Filter): Promise<Doc | null> {
    const [target] = this.matching(filter);
    if (!target) return null;
    this.docs.splice(this.docs.indexOf(target), 1);
    return clone(target);
  }
  async deleteOne(filter: Filter): Promise<{ deletedCount: number }> {
    return { deletedCount: (await this.findOneAndDelete(filter)) ? 1 : 0 };
  }
  async deleteMany(filter: Filter): Promise<{ deletedCount: number }> {
    const targets = new Set(this.matching(filter));
    this.docs = this.docs.filter((d) => !targets.has(d));
    return { deletedCount: targets.size };
  }
  async drop(): Promise<boolean> {
    this.docs = [];
    this.indexes = [];
    return true;
  }
}

/** A fresh, empty fake database. Cast to the driver's `Db` for the adapter under test. */
export function createMingoDb(): Db {
  const collections = new Map<string, FakeCollection>();
  const fake = {
    databaseName: 'mingo',
    collection(name: string): FakeCollection {
      let c = collections.get(name);
      if (!c) collections.set(name, (c = new FakeCollection(name)));
      return c;
    },
    async command(cmd: Document): Promise<Document> {
      if ('ping' in cmd) return { ok: 1 };
      throw new Error(`mingo-db: command not supported: ${Object.keys(cmd).join(',')}`);
    },
  };
  return new Proxy(fake, {
    get(target, prop, receiver) {
      if (prop in target || typeof prop === 'symbol' || prop === 'then') return Reflect.get(target, prop, receiver);
      throw new Error(`mingo-db: Db.${String(prop)} is not supported by the test fake`);
    },
  }) as unknown as Db;
}
