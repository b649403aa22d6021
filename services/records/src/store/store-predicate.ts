/**
 * Predicate cleaning shared by both adapters (docs/rules.md semantics, reference:
 * `rules/matches-predicate.ts`). A comparison whose answer is fixed by the field's declared type
 * is resolved here — a text field never equals a number, a boolean is never ordered, a list is
 * never `==` a scalar — so both compilers only ever see comparisons they translate exactly:
 *
 * - scalar fields (text, timestamp, number, integer, boolean, system fields) against a value of
 *   their own kind, or null;
 * - list fields with `array-contains(-any)` of scalars, or `==`/`!=` null;
 * - json fields (any JSON) against scalars — the compilers check the stored value's JSON type;
 * - `contains` / `starts-with` with a string, on text, timestamp and json fields only.
 *
 * `in [null, …]` becomes `== null OR in […]`. Unknown fields, and object or list values where
 * whole-value equality would be needed, are refused with 400: no user object ever reaches a
 * store filter.
 */
import { InvalidRequestError, type Collection, type ComparisonOp, type FieldType, type JsonValue, type Predicate } from '@plinth/shared';
import { fieldTypeOf, isScalar, type Scalar } from './record-shape';

type Kind = 'string' | 'number' | 'boolean';

/** The JSON kind every stored value of a scalar field has; undefined for json and list fields. */
function storedKind(type: FieldType): Kind | undefined {
  switch (type) {
    case 'text':
    case 'timestamp':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    default:
      return undefined;
  }
}

const kindOf = (v: Scalar): Kind => typeof v as Kind;

function unsupported(field: string, op: ComparisonOp): InvalidRequestError {
  return new InvalidRequestError(`Cannot compare "${field}" ${op} with this value.`, { field, op });
}

/**
 * `f in list` / `f not-in list` keeping the scalars `accepts` can match, the null element split
 * off. Object and list elements can never equal a scalar field's value and are dropped;
 * `wholeValues` fields (json) would need them compared whole, which stores do not do: 400.
 */
function membership(field: string, op: 'in' | 'not-in', value: JsonValue, accepts: (v: Scalar) => boolean, wholeValues: boolean): Predicate {
  const inList = op === 'in';
  if (!Array.isArray(value)) return !inList;
  if (wholeValues && value.some((v) => v !== null && !isScalar(v))) throw unsupported(field, op);
  const scalars = value.filter(isScalar).filter(accepts);
  const withNull = value.includes(null);
  const parts: Predicate[] = [];
  if (withNull) parts.push([field, inList ? '==' : '!=', null]);
  if (scalars.length > 0) parts.push([field, op, scalars]);
  if (parts.length === 0) return !inList;
  if (parts.length === 1) return parts[0] as Predicate;
  return inList ? { or: parts } : { and: parts };
}

function comparison(collection: Pick<Collection, 'fields'>, field: string, op: ComparisonOp, value: JsonValue): Predicate {
  const type = fieldTypeOf(collection, field);
  if (type === undefined) throw new InvalidRequestError(`Unknown field "${field}" in query.`, { field });
  const kind = storedKind(type);
  const sameKind = (v: Scalar): boolean => (kind ? kindOf(v) === kind : true);
  const scalarOfKind = (v: JsonValue): v is Scalar => isScalar(v) && sameKind(v);

  switch (op) {
    case '==':
    case '!=': {
      if (value === null) return [field, op, null];
      if (!isScalar(value)) {
        if (kind !== undefined) return op === '!=';
        throw unsupported(field, op);
      }
      if (type === 'list') return op === '!=';
      return sameKind(value) ? [field, op, value] : op === '!=';
    }
    case '<':
    case '<=':
    case '>':
    case '>=': {
      const ordered = typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
      if (!ordered || type === 'list' || type === 'boolean' || !scalarOfKind(value)) return false;
      return [field, op, value];
    }
    case 'in':
    case 'not-in':
      if (type === 'list') return membership(field, op, value, () => false, true);
      return membership(field, op, value, sameKind, kind === undefined);
    case 'array-contains':
    case 'array-contains-any': {
      if (type !== 'list' && type !== 'json') return false;
      const wanted = op === 'array-contains' ? [value] : Array.isArray(value) ? value : [];
      // A list field holds scalars only; a json field's list may hold anything.
      if (type === 'json' && wanted.some((v) => !isScalar(v))) throw unsupported(field, op);
      const scalars = wanted.filter(isScalar);
      if (scalars.length === 0) return false;
      return op === 'array-contains' ? [field, op, scalars[0] as Scalar] : [field, op, scalars];
    }
    case 'contains':
    case 'starts-with':
      // Only strings hold text; a json field's value is checked for it by the compilers.
      if (typeof value !== 'string' || (kind !== 'string' && type !== 'json')) return false;
      return [field, op, value];
    default:
      throw new InvalidRequestError(`Unknown operator "${String(op)}".`, { field, op });
  }
}

/** The predicate with every type-decided comparison resolved and `true`/`false` folded. */
export function normalizeForStore(p: Predicate, collection: Pick<Collection, 'fields'>): Predicate {
  if (typeof p === 'boolean') return p;
  if (Array.isArray(p)) return comparison(collection, p[0], p[1], p[2]);
  if ('and' in p) {
    const parts = p.and.map((q) => normalizeForStore(q, collection)).filter((q) => q !== true);
    if (parts.includes(false)) return false;
    return parts.length === 0 ? true : parts.length === 1 ? (parts[0] as Predicate) : { and: parts };
  }
  if ('or' in p) {
    const parts = p.or.map((q) => normalizeForStore(q, collection)).filter((q) => q !== false);
    if (parts.includes(true)) return true;
    return parts.length === 0 ? false : parts.length === 1 ? (parts[0] as Predicate) : { or: parts };
  }
  const inner = normalizeForStore(p.not, collection);
  return typeof inner === 'boolean' ? !inner : { not: inner };
}
