import type { JsonValue } from '../types';

/**
 * The value semantics shared by rule evaluation and Predicate JSON (docs/rules.md). Stores must
 * give the same answers; docs/rules.md states them for store authors:
 *
 * - equality is deep JSON equality (object key order does not matter; 1 and 1.0 are equal);
 * - ordering (`< <= > >=`) holds only between two numbers or two strings (strings by code point,
 *   which is UTF-8 byte order); any other pair — null, booleans, lists, objects, mixed types —
 *   compares false, never throws;
 * - `x in list` holds when `list` is a list with an element equal to `x`; a non-list is false.
 */

export function jsonEqual(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => jsonEqual(item, b[i] as JsonValue));
  }
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && jsonEqual(a[k] as JsonValue, b[k] as JsonValue));
}

export type OrderingOp = '<' | '<=' | '>' | '>=';

/** True when both values are numbers or both are strings (the only ordered pairs). */
export function isOrderedPair(a: JsonValue, b: JsonValue): boolean {
  return (typeof a === 'number' && typeof b === 'number') || (typeof a === 'string' && typeof b === 'string');
}

/** Code-point order (= UTF-8 byte order, as SQLite's BINARY collation and MongoDB compare). */
function compareStrings(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

export function compareOrdered(op: OrderingOp, a: JsonValue, b: JsonValue): boolean {
  if (!isOrderedPair(a, b)) return false;
  const c = typeof a === 'number' ? a - (b as number) : compareStrings(a as string, b as string);
  switch (op) {
    case '<':
      return c < 0;
    case '<=':
      return c <= 0;
    case '>':
      return c > 0;
    case '>=':
      return c >= 0;
  }
}

/** `item in list`. */
export function isIn(item: JsonValue, list: JsonValue): boolean {
  return Array.isArray(list) && list.some((el) => jsonEqual(item, el));
}

/** A record field as rules and predicates see it: missing (or undefined) is null. */
export function fieldValue(doc: { [field: string]: JsonValue | undefined } | null | undefined, field: string): JsonValue {
  if (!doc || !Object.prototype.hasOwnProperty.call(doc, field)) return null;
  return doc[field] ?? null;
}
