import type { ComparisonOp, JsonValue, Predicate, RecordDoc } from '../types';
import { compareOrdered, fieldValue, isIn, jsonEqual } from './values';
import { textContains, textStartsWith } from './text-match';

/**
 * Whether `op` holds between a record's field value and a predicate value — the reference
 * semantics of Predicate JSON (docs/rules.md "Predicate semantics"). A missing field is null, so:
 * `==`/`!=` and `in`/`not-in` are exact negations of each other (a missing field is `!= "x"`
 * and `not-in ["x"]`, and `== null`); ordering across types is false; `array-contains` and
 * `array-contains-any` are false on a field that is not a list; `contains` and `starts-with`
 * hold only between two strings, ignoring ASCII case (text-match.ts).
 */
export function comparisonHolds(op: ComparisonOp, field: JsonValue, value: JsonValue): boolean {
  switch (op) {
    case '==':
      return jsonEqual(field, value);
    case '!=':
      return !jsonEqual(field, value);
    case '<':
    case '<=':
    case '>':
    case '>=':
      return compareOrdered(op, field, value);
    case 'in':
      return isIn(field, value);
    case 'not-in':
      return !isIn(field, value);
    case 'array-contains':
      return isIn(value, field);
    case 'array-contains-any':
      return Array.isArray(value) && value.some((v) => isIn(v, field));
    case 'contains':
      return textContains(field, value);
    case 'starts-with':
      return textStartsWith(field, value);
    default:
      throw new TypeError(`unknown predicate operator ${String(op)}`);
  }
}

/** Evaluates Predicate JSON over one record, in memory (used by realtime and by tests of the stores). */
export function matchesPredicate(record: RecordDoc, predicate: Predicate): boolean {
  if (typeof predicate === 'boolean') return predicate;
  if (Array.isArray(predicate)) {
    const [field, op, value] = predicate;
    return comparisonHolds(op, fieldValue(record, field), value);
  }
  if ('and' in predicate) return predicate.and.every((p) => matchesPredicate(record, p));
  if ('or' in predicate) return predicate.or.some((p) => matchesPredicate(record, p));
  if ('not' in predicate) return !matchesPredicate(record, predicate.not);
  throw new TypeError('malformed predicate');
}
