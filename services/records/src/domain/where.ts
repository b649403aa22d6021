/**
 * The `where` query parameter → Predicate (docs/records.md). Every field must be a system field or
 * a declared user field, every operator one of the twelve, and every value of the field's type, so
 * a value like `{"$ne": null}` or a `$`-prefixed field name is a 400 and never widens a query.
 */
import { hasLoneSurrogate, InvalidRequestError, type Collection, type ComparisonOp, type FieldType, type JsonValue, type Predicate } from '@plinth/shared';
import { fieldTypeOf } from '../store/record-shape';
import { coerceValue } from './field-values';
import { ORDERABLE_TYPES } from './collection-definition';

export const OPERATORS: readonly ComparisonOp[] = [
  '==', '!=', '<', '<=', '>', '>=', 'in', 'not-in', 'array-contains', 'array-contains-any', 'contains', 'starts-with',
];
/** At most this many conditions, and values in an `in`-style list. */
export const MAX_CONDITIONS = 30;
export const MAX_LIST_VALUES = 100;
/** Longest operand of `contains` / `starts-with`, in characters. */
export const MAX_TEXT_OPERAND = 500;

const SCALAR_OPS: readonly ComparisonOp[] = ['==', '!=', '<', '<=', '>', '>=', 'in', 'not-in'];
const OPS_BY_TYPE: Readonly<Record<FieldType, readonly ComparisonOp[]>> = {
  text: [...SCALAR_OPS, 'contains', 'starts-with'],
  number: SCALAR_OPS,
  integer: SCALAR_OPS,
  timestamp: SCALAR_OPS,
  boolean: ['==', '!=', 'in', 'not-in'],
  list: ['array-contains', 'array-contains-any'],
  json: [],
  // Never looked up: a relation's values are text or list (fieldTypeOf).
  relation: [],
  // File metadata is not queried (docs/files.md).
  file: [],
  files: [],
};

function bad(message: string, details: { [k: string]: unknown }): InvalidRequestError {
  return new InvalidRequestError(message, { parameter: 'where', ...details });
}

function scalarFor(type: FieldType, v: unknown): JsonValue | undefined {
  if (type === 'list') return typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)) ? v : undefined;
  return coerceValue(type, v);
}

/** One `[field, op, value]` condition, checked and with its value normalized. */
export function parseCondition(collection: Collection, c: unknown, index: number): Predicate {
  if (!Array.isArray(c) || c.length !== 3) {
    throw bad('Each condition must be [field, operator, value].', { index });
  }
  const [field, op, value] = c as [unknown, unknown, unknown];
  const type = typeof field === 'string' ? fieldTypeOf(collection, field) : undefined;
  if (typeof field !== 'string' || type === undefined) {
    throw bad(`Unknown field ${JSON.stringify(field)} in where.`, { index, field });
  }
  if (typeof op !== 'string' || !OPERATORS.includes(op as ComparisonOp)) {
    throw bad(`Unknown operator ${JSON.stringify(op)}; use one of ${OPERATORS.join(' ')}.`, { index, field, op });
  }
  const operator = op as ComparisonOp;
  if (!OPS_BY_TYPE[type].includes(operator)) {
    throw bad(`Operator ${operator} cannot be used on field "${field}" of type ${type}.`, { index, field, op });
  }
  const wrongValue = (): InvalidRequestError =>
    bad(`Invalid value for "${field}" ${operator} (field type ${type}).`, { index, field, op, expected: type });

  if (operator === 'in' || operator === 'not-in' || operator === 'array-contains-any') {
    if (!Array.isArray(value) || value.length === 0 || value.length > MAX_LIST_VALUES) {
      throw bad(`${operator} needs a non-empty array of at most ${MAX_LIST_VALUES} values.`, { index, field, op });
    }
    const values = value.map((v) => scalarFor(type, v));
    if (values.some((v) => v === undefined)) throw wrongValue();
    return [field, operator, values as JsonValue[]];
  }
  if (operator === 'contains' || operator === 'starts-with') {
    if (typeof value !== 'string' || value.length > MAX_TEXT_OPERAND) {
      throw bad(`${operator} needs a string of at most ${MAX_TEXT_OPERAND} characters.`, { index, field, op, max: MAX_TEXT_OPERAND });
    }
    return [field, operator, value];
  }
  if (value === null && (operator === '==' || operator === '!=')) return [field, operator, null];
  const v = scalarFor(type, value);
  if (v === undefined) throw wrongValue();
  return [field, operator, v];
}

/** Parses the raw `where` parameter (absent → true). Conditions are ANDed. */
export function parseWhere(collection: Collection, raw: unknown): Predicate {
  if (raw === undefined || raw === '') return true;
  if (typeof raw !== 'string') throw bad('"where" must be given once, as a JSON array.', {});
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw bad('"where" is not valid JSON.', {});
  }
  if (!Array.isArray(parsed)) throw bad('"where" must be a JSON array of [field, operator, value] conditions.', {});
  // Never stored (storable-json.ts); MongoDB would compare U+FFFD in its place.
  if (hasLoneSurrogate(parsed)) throw bad('"where" has a string that is not valid Unicode (a lone UTF-16 surrogate).', {});
  if (parsed.length > MAX_CONDITIONS) throw bad(`"where" has at most ${MAX_CONDITIONS} conditions.`, {});
  const conditions = parsed.map((c, i) => parseCondition(collection, c, i));
  return conditions.length === 0 ? true : conditions.length === 1 ? (conditions[0] as Predicate) : { and: conditions };
}

/** Whether a field can be used in orderBy. */
export function isOrderable(collection: Collection, field: string): boolean {
  const type = fieldTypeOf(collection, field);
  return type !== undefined && ORDERABLE_TYPES.includes(type);
}
