/**
 * `expand` (docs/records.md, "Expanding relations"): `?expand=author,post.author` puts the records
 * that relation fields point at into each record's `expand` object — one record for a single
 * relation, an array for a list — at most two levels deep. Every expanded record passes its own
 * collection's read rule for the caller: the records of one relation on one page are fetched in
 * one query, `id in [...]` AND the read rule's residual, so a record the caller cannot read is
 * left out and never seen. Bounded: at most MAX_EXPAND_PATHS paths, MAX_EXPANDED_RECORDS records
 * per page, and the page byte budget for their data (past either, 400).
 */
import { InvalidRequestError, type Collection, type JsonValue, type Predicate, type RecordDoc } from '@plinth/shared';
import type { AccessPolicy } from '../domain/access-policy';
import type { RecordLimits } from '../domain/limits';
import { isListRelation, relationIds } from '../domain/relation-field';
import type { RecordStore } from '../store/record-store';
import { splitRecord } from '../store/record-shape';
import { andP } from '../rules/predicate-algebra';
import { accessContext, bypassesRules, type Caller } from './caller';
import type { CollectionOperations } from './collection-operations';

export const MAX_EXPAND_PATHS = 10;
export const MAX_EXPAND_DEPTH = 2;
/** The most records all expansions of one page (or one record) may load. */
export const MAX_EXPANDED_RECORDS = 1000;

/** One relation to expand, and the relations to expand in the records it loads. */
interface ExpandNode {
  field: string;
  list: boolean;
  target: Collection;
  children: ExpandNode[];
}

export type ExpandTree = ExpandNode[];

export interface ExpandDeps {
  store: RecordStore;
  policy: AccessPolicy;
  collections: CollectionOperations;
  limits: RecordLimits;
}

function bad(message: string, details: { [k: string]: unknown }): InvalidRequestError {
  return new InvalidRequestError(message, { parameter: 'expand', ...details });
}

/** The `expand` parameter checked against the definitions; an empty tree when absent. */
export async function parseExpand(deps: ExpandDeps, caller: Caller, collection: Collection, raw: unknown): Promise<ExpandTree> {
  if (raw === undefined || raw === '') return [];
  if (typeof raw !== 'string') throw bad('"expand" must be given once, as field names separated by commas.', {});
  if (Object.hasOwn(collection.fields, 'expand')) {
    throw bad(`Collection "${collection.name}" has a field named "expand", which expanded records would hide; rename it to use expand.`, { field: 'expand' });
  }
  const paths = raw.split(',').map((p) => p.trim());
  if (paths.length > MAX_EXPAND_PATHS) throw bad(`"expand" names at most ${MAX_EXPAND_PATHS} relations.`, { limit: MAX_EXPAND_PATHS });
  const tree: ExpandTree = [];
  for (const path of paths) {
    const names = path.split('.');
    if (names.length > MAX_EXPAND_DEPTH) throw bad(`"expand" goes at most ${MAX_EXPAND_DEPTH} levels deep ("${path.slice(0, 130)}").`, { path: path.slice(0, 130) });
    let level = tree;
    let owner = collection;
    for (const name of names) {
      const def = Object.hasOwn(owner.fields, name) ? owner.fields[name] : undefined;
      const shown = name.slice(0, 64);
      if (!def) throw bad(`Cannot expand "${shown}": not a field of collection "${owner.name}".`, { field: shown });
      if (def.type !== 'relation' || def.collection === undefined) {
        throw bad(`Cannot expand "${shown}": it is a ${def.type} field, not a relation.`, { field: shown });
      }
      let node = level.find((n) => n.field === name);
      if (!node) {
        const target = def.collection === owner.name ? owner : await deps.collections.load(caller.project, def.collection);
        node = { field: name, list: isListRelation(def), target, children: [] };
        level.push(node);
      }
      level = node.children;
      owner = node.target;
    }
  }
  return tree;
}

/** Counts what one page's expansions load, against MAX_EXPANDED_RECORDS and the byte budget. */
interface Budget {
  records: number;
  bytes: number;
}

/** `records` with their `expand` objects, when `tree` asks for any; the records as they are otherwise. */
export async function expandRecords(deps: ExpandDeps, caller: Caller, tree: ExpandTree, records: RecordDoc[], now: Date): Promise<RecordDoc[]> {
  if (tree.length === 0 || records.length === 0) return records;
  return expandLevel(deps, caller, tree, records, now, { records: 0, bytes: 0 });
}

async function expandLevel(deps: ExpandDeps, caller: Caller, tree: ExpandTree, records: RecordDoc[], now: Date, budget: Budget): Promise<RecordDoc[]> {
  const expansions = new Map<string, Map<string, RecordDoc>>();
  for (const node of tree) {
    const def = { type: 'relation' as const, max_items: node.list ? 2 : 1 };
    const ids = [...new Set(records.flatMap((r) => relationIds(def, r[node.field])))];
    const found = await fetchReadable(deps, caller, node.target, ids, now, budget);
    const expanded = node.children.length > 0 ? await expandLevel(deps, caller, node.children, found, now, budget) : found;
    expansions.set(node.field, new Map(expanded.map((r) => [r.id, r])));
  }
  return records.map((record) => {
    const expand: { [field: string]: JsonValue } = {};
    for (const node of tree) {
      const byId = expansions.get(node.field) as Map<string, RecordDoc>;
      const value = record[node.field];
      if (node.list) {
        if (Array.isArray(value)) expand[node.field] = value.flatMap((id) => (typeof id === 'string' && byId.has(id) ? [byId.get(id) as RecordDoc] : []));
      } else if (typeof value === 'string' && byId.has(value)) {
        expand[node.field] = byId.get(value) as RecordDoc;
      }
    }
    return { ...record, expand };
  });
}

/** The records of `ids` the caller may read: one query, `id in ids` AND the read residual. */
async function fetchReadable(deps: ExpandDeps, caller: Caller, target: Collection, ids: string[], now: Date, budget: Budget): Promise<RecordDoc[]> {
  if (ids.length === 0) return [];
  budget.records += ids.length;
  if (budget.records > MAX_EXPANDED_RECORDS) {
    throw bad(`"expand" would load more than ${MAX_EXPANDED_RECORDS} records for this page; ask for fewer records (a smaller limit) or fewer relations.`, {
      limit: MAX_EXPANDED_RECORDS,
    });
  }
  const residual: Predicate = bypassesRules(caller) ? true : deps.policy.readFilter(accessContext(caller, now), target);
  if (residual === false) return [];
  const left = deps.limits.maxPageBytes - budget.bytes;
  const found = await deps.store.queryRecords(caller.project, target, {
    predicate: andP(['id', 'in', ids], residual),
    orderBy: 'id',
    direction: 'asc',
    limit: ids.length,
    maxBytes: Math.max(1, left),
    timeoutMs: deps.limits.queryTimeoutMs,
    ...(caller.client ? { client: caller.client } : {}),
  });
  for (const r of found) budget.bytes += JSON.stringify(splitRecord(r).data).length;
  if (budget.bytes >= deps.limits.maxPageBytes && found.length < ids.length) {
    throw bad(`The expanded records of this page hold more than ${deps.limits.maxPageBytes} characters; ask for fewer records (a smaller limit) or fewer relations.`, {
      limit: deps.limits.maxPageBytes,
    });
  }
  return found;
}
