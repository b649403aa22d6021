import type { Filter, Document } from 'mongodb';
import type { JsonValue, Predicate } from '@plinth/shared';

/**
 * TEST-ONLY: Predicate JSON → MongoDB filter, written to pin down that the Predicate semantics
 * of matchesPredicate can be expressed as an index-friendly Mongo query (the records service's
 * own translator did not exist when this was written; point the property test at it once it does).
 *
 * Mongo matches a scalar condition against any element of an array field, and `{f: null}`
 * against missing fields; our semantics compare whole values with missing = null. Hence the
 * `notArray` guard on scalar comparisons, and `$expr` for list/object equality.
 */
export function predicateToMongoFilter(p: Predicate): Filter<Document> {
  if (p === true) return {};
  if (p === false) return { $expr: false };
  if (Array.isArray(p)) return comparison(p[0], p[1], p[2]);
  if ('and' in p) return p.and.length === 0 ? {} : { $and: p.and.map(predicateToMongoFilter) };
  if ('or' in p) return p.or.length === 0 ? { $expr: false } : { $or: p.or.map(predicateToMongoFilter) };
  return { $nor: [predicateToMongoFilter(p.not)] };
}

const isScalar = (v: JsonValue): boolean => v === null || typeof v !== 'object';

function notArray(field: string): Filter<Document> {
  return { [field]: { $not: { $type: 'array' } } };
}

function equals(field: string, value: JsonValue): Filter<Document> {
  if (isScalar(value)) return { $and: [{ [field]: { $eq: value } }, notArray(field)] };
  return { $expr: { $eq: [`$${field}`, { $literal: value }] } };
}

function isIn(field: string, values: JsonValue): Filter<Document> {
  if (!Array.isArray(values) || values.length === 0) return { $expr: false };
  if (values.every(isScalar)) return { $and: [{ [field]: { $in: values } }, notArray(field)] };
  return { $or: values.map((v) => equals(field, v)) };
}

function arrayContains(field: string, value: JsonValue): Filter<Document> {
  return { [field]: { $type: 'array', $elemMatch: { $eq: value } } };
}

function comparison(field: string, op: string, value: JsonValue): Filter<Document> {
  switch (op) {
    case '==':
      return equals(field, value);
    case '!=':
      return { $nor: [equals(field, value)] };
    case '<':
    case '<=':
    case '>':
    case '>=': {
      if (typeof value !== 'number' && typeof value !== 'string') return { $expr: false };
      const mongoOp = { '<': '$lt', '<=': '$lte', '>': '$gt', '>=': '$gte' }[op];
      return { $and: [{ [field]: { [mongoOp]: value } }, notArray(field)] };
    }
    case 'in':
      return isIn(field, value);
    case 'not-in':
      return { $nor: [isIn(field, value)] };
    case 'array-contains':
      return arrayContains(field, value);
    case 'array-contains-any':
      if (!Array.isArray(value) || value.length === 0) return { $expr: false };
      return { $or: value.map((v) => arrayContains(field, v)) };
    default:
      throw new TypeError(`unknown operator ${op}`);
  }
}
