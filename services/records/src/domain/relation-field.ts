/**
 * Relation fields (docs/records.md, "Relations"): a field of type `relation` holds the id of a
 * record of another collection (`collection`), or with `max_items` above 1 a list of at most
 * that many distinct ids. `on_delete` says what deleting the referenced record does to the
 * referencing one (restrict, cascade, set_null); `readable_by_writer` makes every write check
 * that the writer can read each record it points at. Definitions are checked here; the target
 * records are checked on write by relation-writes.ts.
 */
import { InvalidRequestError, type FieldDefinition, type FieldType, type JsonValue, type OnDelete } from '@plinth/shared';

export const RELATION_OPTIONS = ['collection', 'max_items', 'on_delete', 'readable_by_writer'] as const;
export const ON_DELETE: readonly OnDelete[] = ['restrict', 'cascade', 'set_null'];
/** The most ids one list relation may hold. */
export const MAX_RELATION_ITEMS = 100;
/** Record ids, as newId makes them. */
export const RECORD_ID = /^rec_[0-9a-hjkmnp-tv-z]{26}$/;
const COLLECTION_NAME = /^[a-z][a-z0-9_]{0,62}$/;

export type RelationOptions = Pick<FieldDefinition, (typeof RELATION_OPTIONS)[number]>;

export function isRelationOption(key: string): boolean {
  return (RELATION_OPTIONS as readonly string[]).includes(key);
}

/** True when the relation holds a list of ids (max_items above 1). */
export function isListRelation(def: FieldDefinition): boolean {
  return def.type === 'relation' && (def.max_items ?? 1) > 1;
}

/**
 * The type a field's values have in stores, queries and rules: a single relation is a text id,
 * a list relation a list of ids; every other type is itself.
 */
export function valueTypeOf(def: FieldDefinition): Exclude<FieldType, 'relation'> {
  if (def.type !== 'relation') return def.type;
  return isListRelation(def) ? 'list' : 'text';
}

function optionError(field: string, option: string, message: string): InvalidRequestError {
  return new InvalidRequestError(`"${option}" of field "${field}" ${message}`, { field, key: option });
}

/** The relation options of a field definition as a client sent it; 400 naming the bad option. */
export function parseRelationOptions(field: string, type: FieldType, raw: { [key: string]: unknown }): RelationOptions {
  if (type !== 'relation') {
    for (const option of RELATION_OPTIONS) {
      if (raw[option] !== undefined) throw optionError(field, option, 'applies only to a relation field.');
    }
    return {};
  }
  if (typeof raw.collection !== 'string' || !COLLECTION_NAME.test(raw.collection)) {
    throw optionError(field, 'collection', 'must name the collection the relation points at.');
  }
  const options: RelationOptions = { collection: raw.collection, max_items: 1, on_delete: 'restrict', readable_by_writer: false };
  if (raw.max_items !== undefined) {
    const n = raw.max_items;
    if (!Number.isSafeInteger(n) || (n as number) < 1 || (n as number) > MAX_RELATION_ITEMS) {
      throw optionError(field, 'max_items', `must be an integer from 1 to ${MAX_RELATION_ITEMS}.`);
    }
    options.max_items = n as number;
  }
  if (raw.on_delete !== undefined) {
    if (!ON_DELETE.includes(raw.on_delete as OnDelete)) throw optionError(field, 'on_delete', `must be one of ${ON_DELETE.join(', ')}.`);
    options.on_delete = raw.on_delete as OnDelete;
    if (options.on_delete === 'set_null' && raw.required === true && !(options.max_items && options.max_items > 1)) {
      throw optionError(field, 'on_delete', 'cannot be set_null on a required single relation: its value could not be removed.');
    }
  }
  if (raw.readable_by_writer !== undefined) {
    if (typeof raw.readable_by_writer !== 'boolean') throw optionError(field, 'readable_by_writer', 'must be a boolean.');
    options.readable_by_writer = raw.readable_by_writer;
  }
  return options;
}

/**
 * 400 when a changed definition would reinterpret stored values: a relation keeps its target
 * collection and stays single or list (remove the field and add it again instead).
 */
export function checkRelationChange(field: string, before: FieldDefinition, next: FieldDefinition): void {
  if (before.type !== 'relation' || next.type !== 'relation') return;
  if (before.collection !== next.collection) {
    throw optionError(field, 'collection', 'cannot change; remove the field and add it again.');
  }
  if (isListRelation(before) !== isListRelation(next)) {
    throw optionError(field, 'max_items', 'cannot change between 1 and a list; remove the field and add it again.');
  }
}

/** The checked value of a relation field: one record id, or a list of distinct ids within max_items. */
export function checkRelationValue(field: string, def: FieldDefinition, v: unknown): JsonValue {
  if (!isListRelation(def)) {
    if (typeof v !== 'string' || !RECORD_ID.test(v)) {
      throw new InvalidRequestError(`Field "${field}" must be a record id (rec_…) of collection "${def.collection}".`, { field, expected: 'relation' });
    }
    return v;
  }
  const max = def.max_items ?? 1;
  if (!Array.isArray(v) || v.length > max || !v.every((id) => typeof id === 'string' && RECORD_ID.test(id))) {
    throw new InvalidRequestError(`Field "${field}" must be a list of at most ${max} record ids (rec_…) of collection "${def.collection}".`, {
      field,
      expected: 'relation',
      limit: max,
    });
  }
  if (new Set(v).size !== v.length) throw new InvalidRequestError(`Field "${field}" lists a record id twice.`, { field, expected: 'relation' });
  return v as string[];
}

/** The ids a stored value of a relation field holds (none for a missing or malformed value). */
export function relationIds(def: FieldDefinition, value: JsonValue | undefined): string[] {
  if (typeof value === 'string') return [value];
  if (isListRelation(def) && Array.isArray(value)) return value.filter((id): id is string => typeof id === 'string');
  return [];
}
