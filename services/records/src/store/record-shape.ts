/**
 * Shared by both RecordStore adapters so they stay thin: the split between system and user
 * fields, field types, the last line of defence on predicates, and keyset conditions.
 */
import { InvalidRequestError, type Collection, type FieldType, type JsonValue, type Predicate, type RecordDoc } from '@plinth/shared';
import type { KeysetPosition, SortDirection } from './record-store';

export const SYSTEM_FIELDS = ['id', 'version', 'created_at', 'updated_at'] as const;
export type SystemField = (typeof SYSTEM_FIELDS)[number];

const SYSTEM_FIELD_TYPES: Readonly<Record<SystemField, FieldType>> = {
  id: 'text',
  version: 'integer',
  created_at: 'timestamp',
  updated_at: 'timestamp',
};

export function isSystemField(field: string): field is SystemField {
  return (SYSTEM_FIELDS as readonly string[]).includes(field);
}

/** The type of a system or declared user field; undefined for anything else. */
export function fieldTypeOf(collection: Pick<Collection, 'fields'>, field: string): FieldType | undefined {
  if (isSystemField(field)) return SYSTEM_FIELD_TYPES[field];
  return Object.hasOwn(collection.fields, field) ? collection.fields[field]?.type : undefined;
}

export interface SplitRecord {
  id: string;
  version: number;
  created_at: string;
  updated_at: string;
  data: { [field: string]: JsonValue };
}

export function splitRecord(doc: RecordDoc): SplitRecord {
  const { id, version, created_at, updated_at, ...data } = doc;
  return { id, version, created_at, updated_at, data };
}

export function joinRecord(r: SplitRecord): RecordDoc {
  return { id: r.id, version: r.version, created_at: r.created_at, updated_at: r.updated_at, ...r.data };
}

/** A JSON scalar a store can compare (never an object: user objects never reach a filter). */
export type Scalar = string | number | boolean;

export function isScalar(v: unknown): v is Scalar {
  return typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
}

/**
 * Throws InvalidRequestError unless every comparison names a known field and carries only
 * scalars (or null for ==, !=, or a list of scalars for the list operators). The service
 * validates values against field types before this; this check guarantees no adapter ever sees
 * an object value or an unknown (e.g. `$`-prefixed) field, whatever produced the predicate.
 */
export function assertStorablePredicate(p: Predicate, collection: Pick<Collection, 'fields'>): void {
  if (typeof p === 'boolean') return;
  if (Array.isArray(p)) {
    const [field, op, value] = p;
    if (fieldTypeOf(collection, field) === undefined) {
      throw new InvalidRequestError(`Unknown field "${field}" in query.`, { field });
    }
    const listOp = op === 'in' || op === 'not-in' || op === 'array-contains-any';
    const ok = listOp
      ? Array.isArray(value) && value.length > 0 && value.every(isScalar)
      : isScalar(value) || (value === null && (op === '==' || op === '!='));
    if (!ok) throw new InvalidRequestError(`Invalid value for "${field}" ${op}.`, { field, op });
    return;
  }
  if ('and' in p) p.and.forEach((q) => assertStorablePredicate(q, collection));
  else if ('or' in p) p.or.forEach((q) => assertStorablePredicate(q, collection));
  else assertStorablePredicate(p.not, collection);
}

/**
 * The records strictly after `after` in (orderBy, id) order, as a predicate. Missing values
 * sort first ascending and last descending, like both stores' native ordering.
 */
export function keysetPredicate(orderBy: string, direction: SortDirection, after: KeysetPosition): Predicate {
  const asc = direction === 'asc';
  const idAfter: Predicate = ['id', asc ? '>' : '<', after.id];
  if (orderBy === 'id') return idAfter;
  if (after.value === null) {
    const sameNull: Predicate = { and: [[orderBy, '==', null], idAfter] };
    return asc ? { or: [sameNull, [orderBy, '!=', null]] } : sameNull;
  }
  const beyond: Predicate = [orderBy, asc ? '>' : '<', after.value];
  const tie: Predicate = { and: [[orderBy, '==', after.value], idAfter] };
  return asc || isSystemField(orderBy) ? { or: [beyond, tie] } : { or: [beyond, tie, [orderBy, '==', null]] };
}
