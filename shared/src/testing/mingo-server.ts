/**
 * What the mingo stand-in (mingo-db.ts) does as a MongoDB 7 server does, beyond evaluating
 * queries: the limits and rules of its index catalog, how an index build commits in a replica
 * set, and the `notablescan` parameter. Each rule cites the manual.
 *
 * - At most 64 indexes per collection, `_id_` included; one more is refused with code 67
 *   CannotCreateIndex ("Index Limitations": https://www.mongodb.com/docs/manual/reference/limits/#indexes).
 * - An index's *signature* is its key pattern with `unique`, `sparse`, `partialFilterExpression`
 *   and `collation` (since 5.0): two indexes may share a key pattern when their signatures differ;
 *   one with the same signature under another name is refused with code 85 IndexOptionsConflict
 *   (https://www.mongodb.com/docs/manual/core/index-partial/#restrictions, SERVER-47657).
 * - A build in a replica set commits once its *commit quorum* of voting members has built it;
 *   the default quorum is every voting member (`votingMembers`), so with one member down the
 *   build waits until that member returns. `maxTimeMS` bounds the createIndexes command; when it
 *   expires the build is aborted (code 50 MaxTimeMSExpired; nothing is left)
 *   (https://www.mongodb.com/docs/manual/reference/command/createIndexes/#std-label-createIndexes-cmd-commitQuorum).
 * - listIndexes on a collection that does not exist fails with code 26 NamespaceNotFound
 *   (https://www.mongodb.com/docs/manual/reference/command/listIndexes/); the stand-in takes a
 *   collection to exist while it holds documents or indexes.
 * - With `notablescan`, a query, update or delete whose filter no index can serve fails with
 *   code 291 NoQueryExecutionPlans instead of scanning the collection
 *   (https://www.mongodb.com/docs/manual/reference/parameters/#mongodb-parameter-param.notablescan).
 *
 * Test-only.
 */
import { MongoServerError, type Db, type Document } from 'mongodb';
import { controlOf } from './mingo-faults';

/** Indexes one collection may hold, `_id_` included. */
export const MAX_INDEXES_PER_COLLECTION = 64;

export interface CatalogIndex {
  name: string;
  key: { [field: string]: 1 | -1 | string };
  unique: boolean;
  sparse?: boolean;
  partialFilterExpression?: Document;
  expireAfterSeconds?: number;
}

/** The replica set as the stand-in pretends it is, and server parameters. */
interface ServerState {
  votingMembers: number;
  down: number;
  /** Resolves waiting builds when a member comes back. */
  recovered: Array<() => void>;
  /** Resolves when a build starts waiting for a quorum it cannot reach. */
  stalled: Array<() => void>;
  noTableScan: Set<string>;
}

const states = new WeakMap<object, ServerState>();

function stateOf(control: object): ServerState {
  let s = states.get(control);
  if (!s) states.set(control, (s = { votingMembers: 1, down: 0, recovered: [], stalled: [], noTableScan: new Set() }));
  return s;
}

/** The same signature: such two indexes cannot coexist. */
function sameSignature(a: CatalogIndex, b: CatalogIndex): boolean {
  const sig = (i: CatalogIndex) => JSON.stringify([Object.entries(i.key), i.unique, i.sparse ?? false, i.partialFilterExpression ?? null]);
  return sig(a) === sig(b);
}

/**
 * Whether the catalog `indexes` (without `_id_`) takes `spec`: 'exists' when an identical index of
 * that name is there (a no-op), 'new' when it may be built; otherwise throws the server's error:
 * 86 for a name taken by another index, 85 for the same signature under another name, 67 past
 * the limit.
 */
export function admitIndex(collection: string, indexes: CatalogIndex[], spec: CatalogIndex): 'exists' | 'new' {
  const options = (s: CatalogIndex) => JSON.stringify([s.unique, s.sparse ?? false, s.partialFilterExpression ?? null, s.expireAfterSeconds ?? null]);
  const sameKey = (s: CatalogIndex) => JSON.stringify(Object.entries(s.key)) === JSON.stringify(Object.entries(spec.key));
  const byName = indexes.find((i) => i.name === spec.name);
  if (byName) {
    if (sameKey(byName) && options(byName) === options(spec)) return 'exists';
    throw new MongoServerError({
      message: `An existing index has the same name as the requested index but different key or options: ${spec.name}`,
      code: 86,
      codeName: 'IndexKeySpecsConflict',
    });
  }
  const bySignature = indexes.find((i) => sameSignature(i, spec));
  if (bySignature) {
    throw new MongoServerError({ message: `Index already exists with a different name: ${bySignature.name}`, code: 85, codeName: 'IndexOptionsConflict' });
  }
  if (indexes.length + 1 >= MAX_INDEXES_PER_COLLECTION) {
    throw new MongoServerError({
      message: `add index fails, too many indexes for mingo.${collection} key:${JSON.stringify(spec.key)}`,
      code: 67,
      codeName: 'CannotCreateIndex',
    });
  }
  return 'new';
}

/** What the server answers for a command on a collection that does not exist. */
export function namespaceNotFound(collection: string): MongoServerError {
  return new MongoServerError({ message: `ns does not exist: mingo.${collection}`, code: 26, codeName: 'NamespaceNotFound' });
}

/** Options of createIndex/createIndexes that bound or commit a build. */
export interface BuildOptions {
  maxTimeMS?: number;
  commitQuorum?: number | string;
}

function quorumMet(state: ServerState, quorum: number | string | undefined): boolean {
  const up = state.votingMembers - state.down;
  if (quorum === undefined || quorum === 'votingMembers') return state.down === 0;
  if (quorum === 'majority') return up > state.votingMembers / 2;
  return typeof quorum === 'number' && up >= quorum;
}

function maxTimeExpired(ms: number): MongoServerError {
  return new MongoServerError({ message: `operation exceeded time limit (maxTimeMS ${ms})`, code: 50, codeName: 'MaxTimeMSExpired' });
}

/**
 * Runs one index build (`work` adds the indexes) as a replica set would: waits for its commit
 * quorum and fails with MaxTimeMSExpired past `maxTimeMS`, undoing what `work` added (`undo`).
 * `signal` tells a build still held in `work` that it was aborted.
 */
export async function runIndexBuild<T>(
  control: object,
  options: BuildOptions,
  work: (signal: { aborted: boolean }) => Promise<T>,
  undo: () => void,
): Promise<T> {
  const state = stateOf(control);
  const signal = { aborted: false };
  const build = (async () => {
    const result = await work(signal);
    while (!quorumMet(state, options.commitQuorum)) {
      for (const s of state.stalled.splice(0)) s();
      await new Promise<void>((resolve) => state.recovered.push(resolve));
    }
    return result;
  })();
  if (options.maxTimeMS === undefined || options.maxTimeMS <= 0) return build;
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      signal.aborted = true;
      undo();
      reject(maxTimeExpired(options.maxTimeMS as number));
    }, options.maxTimeMS);
  });
  build.catch(() => {});
  try {
    return await Promise.race([build, expiry]);
  } finally {
    clearTimeout(timer);
  }
}

/** Throws as a server with `notablescan` does when no index's first field is in `filter`. */
export function requireIndexedPlan(control: object, collection: string, filter: Document, indexes: CatalogIndex[]): void {
  if (!stateOf(control).noTableScan.has(collection)) return;
  const fields = new Set<string>();
  const collect = (f: Document): void => {
    for (const [k, v] of Object.entries(f)) {
      if (k === '$and' && Array.isArray(v)) v.forEach((x) => collect(x as Document));
      else if (!k.startsWith('$')) fields.add(k);
    }
  };
  collect(filter);
  const leads = ['_id', ...indexes.map((i) => Object.keys(i.key)[0])];
  if (leads.some((f) => f !== undefined && fields.has(f))) return;
  throw new MongoServerError({
    message: `error processing query: ns=mingo.${collection} planner returned error :: caused by :: No indexed plan available, and running with 'notablescan'`,
    code: 291,
    codeName: 'NoQueryExecutionPlans',
  });
}

// ---- what tests call ----

/** Pretends `db` is a replica set of `votingMembers` voting members, `down` of them unreachable. */
export function setReplicaSet(db: Db, votingMembers: number, down: number): void {
  const state = stateOf(controlOf(db));
  state.votingMembers = votingMembers;
  state.down = down;
  if (down === 0) for (const r of state.recovered.splice(0)) r();
}

/** Resolves when an index build starts waiting for a commit quorum the unreachable members deny it. */
export function nextQuorumStall(db: Db): Promise<void> {
  return new Promise((resolve) => stateOf(controlOf(db)).stalled.push(resolve));
}

/** Turns `notablescan` on for one collection's queries, updates and deletes. */
export function noTableScan(db: Db, collection: string): void {
  stateOf(controlOf(db)).noTableScan.add(collection);
}
