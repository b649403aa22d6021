/**
 * Predicate JSON → MongoDB filter over `{_id, version, created_at, updated_at, data:{…}}`.
 * Every value is wrapped in an operator (`$eq`, `$in`…) and is a checked scalar, and every field
 * comes from the collection's allowlist, so no user-supplied object or `$`-name reaches MongoDB.
 * Semantics match the sqlite compiler (see sqlite-predicate.ts); the contract suite proves it.
 */
import type { Collection, Predicate } from '@plinth/shared';
import type { Filter } from 'mongodb';
import { fieldTypeOf, isSystemField } from '../record-shape';
import { normalizeForStore } from '../store-predicate';
import type { SortDirection } from '../record-store';
import { textRegex } from './mongo-text-operators';

/** The stored shape of a record. */
export interface RecordDocument {
  _id: string;
  version: number;
  created_at: string;
  updated_at: string;
  data: { [field: string]: unknown };
}

export function fieldPath(field: string): string {
  if (field === 'id') return '_id';
  return isSystemField(field) ? field : `data.${field}`;
}

const MATCH_NOTHING: Filter<RecordDocument> = { _id: { $in: [] } };

type Cond = Filter<RecordDocument>;

/**
 * A json field may hold a list, and MongoDB matches `$eq`/`$in`/ranges against a list's
 * elements; Predicate semantics compare whole values, so lists are excluded explicitly —
 * for null too: `{$eq: null}` also matches `[1, null]`, which is a list, not null.
 */
function wholeValue(collection: Pick<Collection, 'fields'>, field: string, cond: Cond): Cond {
  if (fieldTypeOf(collection, field) !== 'json') return cond;
  return { $and: [cond, { [fieldPath(field)]: { $not: { $type: 'array' } } }] };
}

function comparison(collection: Pick<Collection, 'fields'>, [field, op, value]: [string, string, unknown]): Cond {
  const path = fieldPath(field);
  const whole = (cond: Cond): Cond => wholeValue(collection, field, cond);
  switch (op) {
    case '==':
      return whole({ [path]: { $eq: value } });
    case '!=':
      return { $nor: [whole({ [path]: { $eq: value } })] };
    case '<':
      return whole({ [path]: { $lt: value } });
    case '<=':
      return whole({ [path]: { $lte: value } });
    case '>':
      return whole({ [path]: { $gt: value } });
    case '>=':
      return whole({ [path]: { $gte: value } });
    case 'in':
      return whole({ [path]: { $in: value } });
    case 'not-in':
      return { $nor: [whole({ [path]: { $in: value } })] };
    case 'array-contains':
      return { [path]: { $elemMatch: { $eq: value } } };
    case 'array-contains-any':
      return { [path]: { $elemMatch: { $in: value } } };
    case 'contains':
    case 'starts-with':
      return whole({ [path]: textRegex(op, value as string) });
    default:
      throw new Error(`unknown operator ${op}`);
  }
}

function compile(p: Predicate, collection: Pick<Collection, 'fields'>): Cond {
  if (p === true) return {};
  if (p === false) return MATCH_NOTHING;
  if (Array.isArray(p)) return comparison(collection, p);
  if ('and' in p) return p.and.length === 0 ? {} : { $and: p.and.map((q) => compile(q, collection)) };
  if ('or' in p) return p.or.length === 0 ? MATCH_NOTHING : { $or: p.or.map((q) => compile(q, collection)) };
  return { $nor: [compile(p.not, collection)] };
}

/** Compiles a client or rules predicate (cleaned by normalizeForStore first) to a filter. */
export function compileFilter(p: Predicate, collection: Pick<Collection, 'fields'>): Filter<RecordDocument> {
  return compile(normalizeForStore(p, collection), collection);
}

/**
 * Compiles the adapter's own keyset predicate as is: it orders booleans (false < true), which
 * Predicate semantics leave unordered, exactly like the sort it continues.
 */
export function compileKeyset(p: Predicate, collection: Pick<Collection, 'fields'>): Filter<RecordDocument> {
  return compile(p, collection);
}

/** Sort on (field, _id) in one direction. */
export function sortSpec(orderBy: string, direction: SortDirection): { [path: string]: 1 | -1 } {
  const d = direction === 'asc' ? 1 : -1;
  return orderBy === 'id' ? { _id: d } : { [fieldPath(orderBy)]: d, _id: d };
}

/**
 * Index bounds implied by a keyset position, ANDed to the keyset predicate so the server seeks
 * to the position instead of scanning every earlier key (the `$or` alone gives no bounds). Each
 * bound only narrows: every record after the position satisfies it. Ascending: `>= value`.
 * Descending: `<= value` on system fields (never missing); on a scalar user field
 * `not > value`, which also keeps the missing values that follow last, and still bounds the
 * scan. Not on json fields (a list there can hold values on both sides).
 */
export function keysetBound(orderBy: string, direction: SortDirection, after: { value: unknown }, collection: Pick<Collection, 'fields'>): Cond[] {
  if (orderBy === 'id' || after.value === null) return [];
  const path = fieldPath(orderBy);
  if (direction === 'asc') return [{ [path]: { $gte: after.value } }];
  if (isSystemField(orderBy)) return [{ [path]: { $lte: after.value } }];
  const type = fieldTypeOf(collection, orderBy);
  return type === 'json' || type === 'list' ? [] : [{ [path]: { $not: { $gt: after.value } } }];
}
