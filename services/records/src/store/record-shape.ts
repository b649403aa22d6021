/**
 * Shared by both RecordStore adapters so they stay thin: the split between system and user
 * fields, field types, the last line of defence on predicates, and keyset conditions.
 */
import type { Collection, FieldType, JsonValue, Predicate, RecordDoc } from '@plinth/shared';
import type { KeysetPosition, SortDirection } from './record-store';
import { valueTypeOf } from '../domain/relation-field';

export const SYSTEM_FIELDS = ['id', 'version', 'created_at', 'updated_at'] as const;
export type SystemField = (typeof SYSTEM_FIELDS)[number];

const SYSTEM_FIELD_TYPES: Readonly<Record<SystemField, Exclude<FieldType, 'relation'>>> = {
  id: 'text',
  version: 'integer',
  created_at: 'timestamp',
  updated_at: 'timestamp',
};

export function isSystemField(field: string): field is SystemField {
  return (SYSTEM_FIELDS as readonly string[]).includes(field);
}

/**
 * The type of the values of a system or declared user field (a relation's is text or list:
 * relation-field.ts); undefined for anything else.
 */
export function fieldTypeOf(collection: Pick<Collection, 'fields'>, field: string): Exclude<FieldType, 'relation'> | undefined {
  if (isSystemField(field)) return SYSTEM_FIELD_TYPES[field];
  const def = Object.hasOwn(collection.fields, field) ? collection.fields[field] : undefined;
  return def ? valueTypeOf(def) : undefined;
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
