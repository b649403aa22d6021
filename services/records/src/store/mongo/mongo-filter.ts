/**
 * Predicate JSON → MongoDB filter over `{_id, version, created_at, updated_at, data:{…}}`.
 * Every value is wrapped in an operator (`$eq`, `$in`…) and is a checked scalar, and every field
 * comes from the collection's allowlist, so no user-supplied object or `$`-name reaches MongoDB.
 * Semantics match the sqlite compiler (see sqlite-predicate.ts); the contract suite proves it.
 */
import type { Collection, Predicate } from '@plinth/shared';
import type { Filter } from 'mongodb';
import { assertStorablePredicate, isSystemField } from '../record-shape';
import type { SortDirection } from '../record-store';

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

function comparison([field, op, value]: [string, string, unknown]): Filter<RecordDocument> {
  const path = fieldPath(field);
  switch (op) {
    case '==':
      return { [path]: { $eq: value } };
    case '!=':
      return { [path]: { $ne: value } };
    case '<':
      return { [path]: { $lt: value } };
    case '<=':
      return { [path]: { $lte: value } };
    case '>':
      return { [path]: { $gt: value } };
    case '>=':
      return { [path]: { $gte: value } };
    case 'in':
      return { [path]: { $in: value } };
    case 'not-in':
      return { [path]: { $nin: value } };
    case 'array-contains':
      return { [path]: { $elemMatch: { $eq: value } } };
    case 'array-contains-any':
      return { [path]: { $elemMatch: { $in: value } } };
    default:
      throw new Error(`unknown operator ${op}`);
  }
}

function compile(p: Predicate): Filter<RecordDocument> {
  if (p === true) return {};
  if (p === false) return MATCH_NOTHING;
  if (Array.isArray(p)) return comparison(p);
  if ('and' in p) return p.and.length === 0 ? {} : { $and: p.and.map(compile) };
  if ('or' in p) return p.or.length === 0 ? MATCH_NOTHING : { $or: p.or.map(compile) };
  return { $nor: [compile(p.not)] };
}

/** Compiles a checked predicate to a filter. */
export function compileFilter(p: Predicate, collection: Pick<Collection, 'fields'>): Filter<RecordDocument> {
  assertStorablePredicate(p, collection);
  return compile(p);
}

/** Sort on (field, _id) in one direction. */
export function sortSpec(orderBy: string, direction: SortDirection): { [path: string]: 1 | -1 } {
  const d = direction === 'asc' ? 1 : -1;
  return orderBy === 'id' ? { _id: d } : { [fieldPath(orderBy)]: d, _id: d };
}
