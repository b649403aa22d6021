/**
 * Collection definitions as clients send them (docs/records.md): names, field definitions and
 * rules, from a JSON body or a form-encoded one (`fields` and `rules` as JSON strings).
 */
import { hasLoneSurrogate, InvalidRequestError, type CollectionRules, type FieldDefinition, type FieldType } from '@plinth/shared';
import { unknownParameter } from './unknown-parameter';
import { isSystemField } from '../store/record-shape';
import { CONSTRAINT_OPTIONS, isConstraintOption, parseFieldConstraints } from './field-constraints';
import { RELATION_OPTIONS, checkRelationChange, isRelationOption, parseRelationOptions, valueTypeOf } from './relation-field';
import { parseSearchable } from './search-terms';
import { parseFileField } from '../files/file-field';

export const COLLECTION_NAME = /^[a-z][a-z0-9_]{0,62}$/;
export const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_]{0,62}$/;
export const FIELD_TYPES: readonly FieldType[] = ['text', 'number', 'integer', 'boolean', 'timestamp', 'json', 'list', 'relation', 'file', 'files'];
/** Types a store can compare, sort and index. */
export const ORDERABLE_TYPES: readonly FieldType[] = ['text', 'number', 'integer', 'boolean', 'timestamp'];
export const MAX_FIELDS = 100;
/**
 * Fields that may be `indexed` or `unique` in one collection, on every store alike. MongoDB holds
 * at most 64 indexes per collection; each such field takes up to 3 (docs/records.md, "Indexes"),
 * beside `_id_` and two for `created_at`/`updated_at`: 20 fields take 63.
 */
export const MAX_INDEXED_FIELDS = 20;
const RULE_NAMES = ['read', 'create', 'update', 'delete'] as const;
const FIELD_OPTIONS = ['required', 'unique', 'indexed'] as const;
/** The options of a `file` / `files` field (docs/files.md "Fields"). */
const FILE_FIELD_OPTIONS = ['type', 'required', 'max_size', 'mime_types', 'max_items', 'thumbs'];

export type Fields = { [field: string]: FieldDefinition };

function isPlainObject(v: unknown): v is { [k: string]: unknown } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A body parameter that is an object, or a JSON string of one (form-encoded bodies). */
export function objectParam(name: string, v: unknown): { [k: string]: unknown } {
  let value = v;
  if (typeof v === 'string') {
    try {
      value = JSON.parse(v);
    } catch {
      throw new InvalidRequestError(`"${name}" must be a JSON object.`, { field: name });
    }
  }
  if (!isPlainObject(value)) throw new InvalidRequestError(`"${name}" must be a JSON object.`, { field: name });
  return value;
}

/** Throws 400 naming (when it looks like a name) the first key of `body` that is not in `allowed`. */
export function refuseUnknownKeys(body: { [k: string]: unknown }, allowed: readonly string[]): void {
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) throw unknownParameter(key);
  }
}

export function parseCollectionName(v: unknown): string {
  if (typeof v !== 'string' || !COLLECTION_NAME.test(v)) {
    throw new InvalidRequestError('"name" must match ^[a-z][a-z0-9_]{0,62}$.', { field: 'name' });
  }
  return v;
}

/** One field definition, normalized to all four keys, plus the constraint options given. */
export function parseFieldDefinition(field: string, v: unknown): FieldDefinition {
  if (!FIELD_NAME.test(field)) {
    throw new InvalidRequestError(`Field name "${field}" must match ^[A-Za-z][A-Za-z0-9_]{0,62}$.`, { field });
  }
  if (isSystemField(field)) throw new InvalidRequestError(`Field name "${field}" is reserved.`, { field });
  if (!isPlainObject(v)) throw new InvalidRequestError(`Field "${field}" must be an object like {"type":"text"}.`, { field });
  if (v.type === 'file' || v.type === 'files') return fileFieldDefinition(field, v);
  for (const key of Object.keys(v)) {
    if (key !== 'type' && key !== 'searchable' && !(FIELD_OPTIONS as readonly string[]).includes(key) && !isConstraintOption(key) && !isRelationOption(key)) {
      const options = ['type', ...FIELD_OPTIONS, 'searchable', ...CONSTRAINT_OPTIONS, ...RELATION_OPTIONS].join(', ');
      throw new InvalidRequestError(`Field "${field}" has an unknown option "${key}"; use ${options}.`, { field, key });
    }
  }
  const type = v.type as FieldType;
  if (!FIELD_TYPES.includes(type)) {
    throw new InvalidRequestError(`Field "${field}" has no valid type; use one of ${FIELD_TYPES.join(', ')}.`, { field, key: 'type' });
  }
  const def: FieldDefinition = { type, required: false, unique: false, indexed: false };
  for (const option of FIELD_OPTIONS) {
    const o = v[option];
    if (o !== undefined && typeof o !== 'boolean') {
      throw new InvalidRequestError(`"${option}" of field "${field}" must be a boolean.`, { field, key: option });
    }
    def[option] = o ?? false;
  }
  const full: FieldDefinition = { ...def, ...parseFieldConstraints(field, type, v), ...parseRelationOptions(field, type, v) };
  // A single relation is a text id: it may be indexed (deletes find the records pointing at one).
  if ((def.unique || def.indexed) && !ORDERABLE_TYPES.includes(valueTypeOf(full))) {
    throw new InvalidRequestError(`Field "${field}" of type ${type} cannot be unique or indexed.`, { field, key: def.unique ? 'unique' : 'indexed' });
  }
  return { ...full, ...parseSearchable(field, type, v.searchable) };
}

/** A `file` / `files` field: its own options only; never unique, indexed or searchable. */
function fileFieldDefinition(field: string, v: { [k: string]: unknown }): FieldDefinition {
  // A definition as the API answers it (`unique` and `indexed` false) is taken back as it is.
  for (const key of ['unique', 'indexed'] as const) {
    if (v[key] !== undefined && v[key] !== false) throw new InvalidRequestError(`Field "${field}" of type ${String(v.type)} cannot be unique or indexed.`, { field, key });
  }
  for (const key of Object.keys(v).filter((k) => k !== 'unique' && k !== 'indexed')) {
    if (!FILE_FIELD_OPTIONS.includes(key)) {
      throw new InvalidRequestError(`Field "${field}" has an unknown option "${key}"; a ${String(v.type)} field takes ${FILE_FIELD_OPTIONS.join(', ')}.`, { field, key });
    }
  }
  if (v.required !== undefined && typeof v.required !== 'boolean') {
    throw new InvalidRequestError(`"required" of field "${field}" must be a boolean.`, { field, key: 'required' });
  }
  const o = parseFileField(field, v);
  return { type: o.type, required: v.required === true, unique: false, indexed: false, max_size: o.max_size, mime_types: o.mime_types, max_items: o.max_items, thumbs: o.thumbs };
}

export function parseFields(v: unknown): Fields {
  const raw = objectParam('fields', v);
  const fields: Fields = {};
  for (const [name, def] of Object.entries(raw)) fields[name] = parseFieldDefinition(name, def);
  if (Object.keys(fields).length > MAX_FIELDS) {
    throw new InvalidRequestError(`A collection has at most ${MAX_FIELDS} fields.`, { field: 'fields' });
  }
  checkIndexedFields(fields);
  return fields;
}

const indexedCount = (fields: Fields): number => Object.values(fields).filter((d) => d.indexed || d.unique).length;

/**
 * 400 when `fields` has more than MAX_INDEXED_FIELDS indexed or unique fields. A change to a
 * collection already past it (made before the limit) is refused only when it adds to them.
 */
function checkIndexedFields(fields: Fields, current?: Fields): void {
  const n = indexedCount(fields);
  if (n <= MAX_INDEXED_FIELDS || (current && n <= indexedCount(current))) return;
  throw new InvalidRequestError(
    `A collection has at most ${MAX_INDEXED_FIELDS} fields that are indexed or unique (this definition has ${n}): each takes up to 3 of MongoDB's 64 indexes per collection.`,
    { field: 'fields', limit: MAX_INDEXED_FIELDS, indexed_fields: n },
  );
}

/** Rules as given: each of read/create/update/delete a string; with `allowNull`, null removes one. */
export function parseRules(v: unknown, allowNull = false): { [name: string]: string | null } {
  const raw = objectParam('rules', v);
  refuseUnknownKeys(raw, RULE_NAMES);
  for (const [name, rule] of Object.entries(raw)) {
    if (typeof rule !== 'string' && !(allowNull && rule === null)) {
      throw new InvalidRequestError(`Rule "${name}" must be a string expression.`, { field: 'rules', rule: name });
    }
    // Stored in the definition: MongoDB would keep U+FFFD in its place (storable-json.ts).
    if (typeof rule === 'string' && hasLoneSurrogate(rule)) {
      throw new InvalidRequestError(`Rule "${name}" has a string that is not valid Unicode (a lone UTF-16 surrogate).`, { field: 'rules', rule: name });
    }
  }
  return raw as { [name: string]: string | null };
}

/** Applies a rules patch (null removes a rule). */
export function mergeRules(current: CollectionRules, patch: { [name: string]: string | null }): CollectionRules {
  const next: { [name: string]: string } = { ...current } as { [name: string]: string };
  for (const [name, rule] of Object.entries(patch)) {
    if (rule === null) delete next[name];
    else next[name] = rule;
  }
  return next;
}

export interface FieldsChange {
  fields: Fields;
  removed: string[];
}

/**
 * Applies a fields patch: a definition adds or replaces a field, null removes it (and its
 * stored values). A field's type cannot change: remove it and add it again.
 */
export function mergeFields(current: Fields, v: unknown): FieldsChange {
  const raw = objectParam('fields', v);
  const fields: Fields = { ...current };
  const removed: string[] = [];
  for (const [name, def] of Object.entries(raw)) {
    if (def === null) {
      if (Object.hasOwn(fields, name)) {
        delete fields[name];
        removed.push(name);
      }
      continue;
    }
    const next = parseFieldDefinition(name, def);
    const before = Object.hasOwn(current, name) ? current[name] : undefined;
    if (before && before.type !== next.type) {
      throw new InvalidRequestError(`The type of field "${name}" cannot change; remove the field and add it again.`, { field: name, key: 'type' });
    }
    if (before) checkRelationChange(name, before, next);
    fields[name] = next;
  }
  if (Object.keys(fields).length > MAX_FIELDS) {
    throw new InvalidRequestError(`A collection has at most ${MAX_FIELDS} fields.`, { field: 'fields' });
  }
  checkIndexedFields(fields, current);
  return { fields, removed };
}
