/**
 * Index changes on MongoDB that never leave a gap. An index whose options changed (an older
 * release's) is replaced by building the new one *beside* it, under its other name (`<name>` or
 * `<name>~2`, alternately), and dropping the old one only once the new one is built: a unique
 * index keeps holding throughout, so no duplicate can enter during the change. MongoDB 5.0+
 * lets two indexes share a key pattern when their unique, sparse or partial filter differ. Only
 * a change the server cannot hold side by side (`expireAfterSeconds` alone) drops first; that is
 * refused for a unique index, which must be changed by hand.
 *
 * Processes starting together agree: both pick the same name (a build of an identical index
 * joins the running one) and a drop of an index already dropped is not an error.
 */
import type { CreateIndexesOptions, Document, IndexDescription } from 'mongodb';
import { loadMongodb } from './mongo-client';

/** MongoDB refused an index because one of that name or keys exists with other options (codes 85, 86). */
export function isMongoIndexConflict(err: unknown): boolean {
  return err instanceof loadMongodb().MongoServerError && (err.code === 85 || err.code === 86);
}

/**
 * The indexes of a collection, none when it does not exist: the server answers listIndexes on a
 * missing collection with code 26 NamespaceNotFound (a fresh database, a dropped collection).
 */
export async function listMongoIndexes(c: Pick<MongoIndexable, 'listIndexes'>): Promise<Document[]> {
  try {
    return await c.listIndexes().toArray();
  } catch (err) {
    if (err instanceof loadMongodb().MongoServerError && err.code === 26) return [];
    throw err;
  }
}

function isIndexNotFound(err: unknown): boolean {
  return err instanceof loadMongodb().MongoServerError && (err.code === 27 || err.codeName === 'IndexNotFound');
}

/** What ensureMongoIndexes needs of a collection (the driver's, or a test stand-in's). */
export interface MongoIndexable {
  createIndexes(specs: IndexDescription[], options: CreateIndexesOptions): Promise<string[]>;
  dropIndex(name: string): Promise<unknown>;
  listIndexes(): { toArray(): Promise<Document[]> };
}

/** A wanted index: its name is the family name (`<name>` or `<name>~2` on the server). */
export type WantedIndex = IndexDescription & { name: string };

/** The family name of a server index: `ux:slug~2` → `ux:slug`. */
export function indexFamily(name: string): string {
  return name.endsWith('~2') ? name.slice(0, -2) : name;
}

const flag = (v: unknown): boolean => v === true || v === 1;

/** Same signature: two such indexes cannot exist side by side. */
function sameSignature(have: Document, want: WantedIndex): boolean {
  return (
    JSON.stringify(Object.entries(have.key as Document)) === JSON.stringify(Object.entries(want.key)) &&
    flag(have.unique) === flag(want.unique) &&
    flag(have.sparse) === flag(want.sparse) &&
    JSON.stringify(have.partialFilterExpression ?? null) === JSON.stringify(want.partialFilterExpression ?? null)
  );
}

function equivalent(have: Document, want: WantedIndex): boolean {
  return sameSignature(have, want) && (have.expireAfterSeconds ?? null) === (want.expireAfterSeconds ?? null);
}

interface Plan {
  /** Family name → the server name that serves it once the plan ran. */
  names: Map<string, string>;
  dropFirst: string[];
  create: IndexDescription[];
  dropAfter: string[];
}

function plan(existing: Document[], wanted: WantedIndex[]): Plan {
  const out: Plan = { names: new Map(), dropFirst: [], create: [], dropAfter: [] };
  const taken = new Set(existing.map((i) => i.name as string));
  for (const want of wanted) {
    const family = existing.filter((i) => indexFamily(i.name as string) === want.name);
    const serving = family.find((i) => equivalent(i, want));
    if (serving) {
      out.names.set(want.name, serving.name as string);
      out.dropAfter.push(...family.filter((i) => i !== serving).map((i) => i.name as string));
      continue;
    }
    const clash = existing.find((i) => sameSignature(i, want));
    if (clash && equivalent(clash, want)) {
      // The same index under a name of someone else's choosing (built by hand): it serves.
      out.names.set(want.name, clash.name as string);
      out.dropAfter.push(...family.map((i) => i.name as string));
      continue;
    }
    if (clash) {
      if (flag(clash.unique)) {
        throw new Error(`MongoDB index "${clash.name as string}" must be replaced by hand: its options changed in a way the server cannot build beside it (collMod).`);
      }
      out.dropFirst.push(clash.name as string);
      taken.delete(clash.name as string);
    }
    const name = [want.name, `${want.name}~2`].find((n) => !taken.has(n)) ?? `${want.name}~2`;
    if (taken.has(name)) {
      // Both names hold stale versions: the second goes first, the first keeps holding.
      out.dropFirst.push(name);
    }
    taken.add(name);
    out.create.push({ ...want, name });
    out.names.set(want.name, name);
    out.dropAfter.push(...family.map((i) => i.name as string).filter((n) => n !== name && !out.dropFirst.includes(n)));
  }
  return out;
}

/** Drops an index; one already dropped (by another process) is fine. */
export async function dropMongoIndex(c: Pick<MongoIndexable, 'dropIndex'>, name: string): Promise<void> {
  try {
    await c.dropIndex(name);
  } catch (err) {
    if (!isIndexNotFound(err)) throw err;
  }
}

/**
 * Gives `c` every index of `wanted` with exactly its options, in one build (`build` bounds it:
 * `maxTimeMS`, `commitQuorum`, default a majority of voting members so one member down does not
 * hold it). Returns each family name's server name.
 */
export async function ensureMongoIndexes(
  c: MongoIndexable,
  wanted: WantedIndex[],
  build: CreateIndexesOptions = {},
): Promise<Map<string, string>> {
  for (let attempt = 1; ; attempt++) {
    const p = plan(await listMongoIndexes(c), wanted);
    try {
      for (const name of p.dropFirst) await dropMongoIndex(c, name);
      if (p.create.length > 0) await c.createIndexes(p.create, { commitQuorum: 'majority', ...build });
    } catch (err) {
      // Another process changed the same indexes meanwhile: look again.
      if (isMongoIndexConflict(err) && attempt < 3) continue;
      throw err;
    }
    for (const name of p.dropAfter) await dropMongoIndex(c, name);
    return p.names;
  }
}

/** One index: created, or replaced without a gap when an older release left it with other options. */
export async function ensureMongoIndex(c: MongoIndexable, key: IndexDescription['key'], options: CreateIndexesOptions & { name: string }): Promise<void> {
  await ensureMongoIndexes(c, [{ key, ...options } as WantedIndex]);
}
