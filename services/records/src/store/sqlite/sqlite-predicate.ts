/**
 * Predicate JSON → SQL over one collection table, with bound parameters (DESIGN.md §6).
 *
 * Semantics shared with the mongo adapter (two-valued: a comparison is never "unknown"):
 * `== null` matches a missing value; `!=` and `not-in` match missing values; ranges and `in`
 * never match a missing value or a value of another type; `not` negates exactly.
 * Field names come from the collection's allowlist and are inlined (an expression index only
 * matches a literal path); every value is a bound parameter.
 */
import type { Collection, Predicate } from '@plinth/shared';
import { assertStorablePredicate, isSystemField, type Scalar } from '../record-shape';

export interface SqlFragment {
  sql: string;
  params: SqlValue[];
}
export type SqlValue = string | number;

/** The SQL expression of a field: a column for system fields, a JSON path for user fields. */
export function fieldExpr(field: string): string {
  return isSystemField(field) ? field : `json_extract(data, '$.${field}')`;
}

/** SQLite has no boolean: JSON true/false read back as 1/0. */
export function bindValue(v: Scalar): SqlValue {
  return typeof v === 'boolean' ? (v ? 1 : 0) : v;
}

function sameTypeGuard(x: string, v: Scalar): string {
  if (typeof v === 'string') return `typeof(${x}) = 'text'`;
  return `typeof(${x}) IN ('integer', 'real')`;
}

/** A json_each row equal to `v`, type included (true is not 1). */
function elementMatch(v: Scalar, params: SqlValue[]): string {
  if (typeof v === 'boolean') return `e.type = '${v ? 'true' : 'false'}'`;
  params.push(v);
  return typeof v === 'string' ? `(e.type = 'text' AND e.value = ?)` : `(e.type IN ('integer', 'real') AND e.value = ?)`;
}

function comparison([field, op, value]: [string, string, unknown], params: SqlValue[]): string {
  const x = fieldExpr(field);
  const list = Array.isArray(value) ? (value as Scalar[]) : [];
  switch (op) {
    case '==':
      if (value === null) return `${x} IS NULL`;
      params.push(bindValue(value as Scalar));
      return `(${x} IS NOT NULL AND ${x} = ?)`;
    case '!=':
      if (value === null) return `${x} IS NOT NULL`;
      params.push(bindValue(value as Scalar));
      return `${x} IS NOT ?`;
    case '<':
    case '<=':
    case '>':
    case '>=': {
      const v = value as Scalar;
      params.push(bindValue(v));
      const guard = typeof v === 'boolean' ? `typeof(${x}) = 'integer'` : sameTypeGuard(x, v);
      return `(${guard} AND ${x} ${op} ?)`;
    }
    case 'in':
    case 'not-in': {
      params.push(...list.map(bindValue));
      const marks = list.map(() => '?').join(', ');
      return op === 'in' ? `(${x} IS NOT NULL AND ${x} IN (${marks}))` : `(${x} IS NULL OR ${x} NOT IN (${marks}))`;
    }
    case 'array-contains':
    case 'array-contains-any': {
      const wanted = op === 'array-contains' ? [value as Scalar] : list;
      const any = wanted.map((v) => elementMatch(v, params)).join(' OR ');
      return `(json_type(data, '$.${field}') IS 'array' AND EXISTS (SELECT 1 FROM json_each(data, '$.${field}') AS e WHERE ${any}))`;
    }
    default:
      throw new Error(`unknown operator ${op}`);
  }
}

function compile(p: Predicate, params: SqlValue[]): string {
  if (p === true) return '1';
  if (p === false) return '0';
  if (Array.isArray(p)) return comparison(p, params);
  if ('and' in p) return p.and.length === 0 ? '1' : `(${p.and.map((q) => compile(q, params)).join(' AND ')})`;
  if ('or' in p) return p.or.length === 0 ? '0' : `(${p.or.map((q) => compile(q, params)).join(' OR ')})`;
  return `(NOT ${compile(p.not, params)})`;
}

/** Compiles a predicate to a WHERE expression that is never NULL. */
export function compilePredicate(p: Predicate, collection: Pick<Collection, 'fields'>): SqlFragment {
  assertStorablePredicate(p, collection);
  const params: SqlValue[] = [];
  return { sql: compile(p, params), params };
}
