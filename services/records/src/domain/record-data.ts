/**
 * User fields of a record against its collection's definition (docs/records.md): unknown field,
 * wrong type, missing required field and a value over its size limit are 400s naming the field
 * in `details`.
 */
import { InvalidRequestError, type Collection, type FieldDefinition, type JsonValue, type RecordDoc } from '@plinth/shared';
import { checkRelationValue } from './relation-field';
import { splitRecord } from '../store/record-shape';
import { addDefaults, checkConstraints } from './field-constraints';
import { checkValue } from './field-values';
import { DEFAULT_LIMITS, checkRecordSize, checkValueSize, type RecordLimits } from './limits';

export type RecordData = { [field: string]: JsonValue };

function dataObject(v: unknown): { [k: string]: unknown } {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw new InvalidRequestError('"data" must be an object of field values.', { field: 'data' });
  }
  return v as { [k: string]: unknown };
}

function checkFields(collection: Collection, data: { [k: string]: unknown }): void {
  for (const field of Object.keys(data)) {
    if (!Object.hasOwn(collection.fields, field)) {
      throw new InvalidRequestError(`Unknown field "${field}" in collection "${collection.name}".`, { field });
    }
  }
}

function requireFields(collection: Collection, data: RecordData): void {
  for (const [field, def] of Object.entries(collection.fields)) {
    if (def.required && !Object.hasOwn(data, field)) {
      throw new InvalidRequestError(`Field "${field}" is required.`, { field, reason: 'required' });
    }
  }
}

/** A checked value of a declared field, within its size limit. */
function fieldValue(field: string, def: FieldDefinition, value: unknown, limits: RecordLimits): JsonValue {
  if (def.type === 'relation') return checkRelationValue(field, def, value);
  const checked = checkValue(field, def.type, value);
  checkValueSize(field, def.type, checked, limits);
  return checked;
}

/** The user fields of a new record, normalized, with defaults added. null stands for "not given". */
export function validateNewData(collection: Collection, v: unknown, limits: RecordLimits = DEFAULT_LIMITS): RecordData {
  const given = dataObject(v);
  checkFields(collection, given);
  const data: RecordData = {};
  for (const [field, value] of Object.entries(given)) {
    const def = collection.fields[field];
    if (value === null || value === undefined || !def) continue;
    data[field] = fieldValue(field, def, value, limits);
  }
  addDefaults(collection.fields, data);
  checkConstraints(collection.fields, data, Object.keys(data));
  requireFields(collection, data);
  checkRecordSize(data, limits);
  return data;
}

/** `before`'s user fields merged with a patch: a value replaces, null removes an optional field. */
export function mergeData(collection: Collection, before: RecordDoc, v: unknown, limits: RecordLimits = DEFAULT_LIMITS): RecordData {
  const patch = v === undefined ? {} : dataObject(v);
  checkFields(collection, patch);
  const data: RecordData = { ...splitRecord(before).data };
  for (const [field, value] of Object.entries(patch)) {
    const def = collection.fields[field];
    if (!def) continue;
    if (value === null) {
      if (def.required) throw new InvalidRequestError(`Field "${field}" is required and cannot be removed.`, { field, reason: 'required' });
      delete data[field];
    } else {
      data[field] = fieldValue(field, def, value, limits);
    }
  }
  checkConstraints(collection.fields, data, Object.keys(patch));
  checkRecordSize(data, limits);
  return data;
}
