/**
 * Field options that constrain values, beside `type` (docs/records.md, "Field options"): `min`,
 * `max`, `min_length`, `max_length`, `pattern`, `enum` and `default`. They are parsed when a
 * collection is saved (a 400 names the bad option) and checked on every value written (a 400
 * names the field and the constraint). Records already stored are never rewritten or re-checked
 * when a constraint changes: a value is checked when it is written.
 */
import { InvalidRequestError, unstorableJsonReason, type FieldDefinition, type FieldType, type JsonValue } from '@plinth/shared';
import { coerceValue } from './field-values';
import { DEFAULT_LIMITS, checkValueSize } from './limits';
import { patternMatches, patternProblem } from './safe-pattern';

export const CONSTRAINT_OPTIONS = ['min', 'max', 'min_length', 'max_length', 'pattern', 'enum', 'default'] as const;
export type ConstraintOption = (typeof CONSTRAINT_OPTIONS)[number];
export type FieldConstraints = Pick<FieldDefinition, ConstraintOption>;
export const MAX_ENUM_VALUES = 100;

const ALL_TYPES: readonly FieldType[] = ['text', 'number', 'integer', 'boolean', 'timestamp', 'json', 'list'];
/** The field types each option applies to. */
const APPLIES_TO: Readonly<Record<ConstraintOption, readonly FieldType[]>> = {
  min: ['number', 'integer', 'timestamp'],
  max: ['number', 'integer', 'timestamp'],
  min_length: ['text', 'list'],
  max_length: ['text', 'list'],
  pattern: ['text'],
  enum: ['text', 'number', 'integer', 'timestamp'],
  default: ALL_TYPES,
};

/** A constraint a value breaks: the message's predicate and the details beside field and constraint. */
interface Broken {
  constraint: Exclude<ConstraintOption, 'default'>;
  mustBe: string;
  details: { [key: string]: unknown };
}

export function isConstraintOption(key: string): key is ConstraintOption {
  return (CONSTRAINT_OPTIONS as readonly string[]).includes(key);
}

function optionError(field: string, option: ConstraintOption, message: string, extra: { [key: string]: unknown } = {}): InvalidRequestError {
  return new InvalidRequestError(`"${option}" of field "${field}" ${message}`, { field, key: option, ...extra });
}

function parseBound(field: string, option: 'min' | 'max', type: FieldType, v: unknown): number | string {
  const value = coerceValue(type, v);
  if (typeof value !== 'number' && typeof value !== 'string') {
    throw optionError(field, option, `must be ${type === 'timestamp' ? 'an ISO 8601 timestamp with a time zone' : `a value of type ${type}`}.`);
  }
  return value;
}

function parseLength(field: string, option: 'min_length' | 'max_length', v: unknown): number {
  if (!Number.isSafeInteger(v) || (v as number) < 0) throw optionError(field, option, 'must be an integer ≥ 0.');
  return v as number;
}

function parseEnum(field: string, type: FieldType, v: unknown): JsonValue[] {
  if (!Array.isArray(v) || v.length === 0 || v.length > MAX_ENUM_VALUES) {
    throw optionError(field, 'enum', `must be a list of 1 to ${MAX_ENUM_VALUES} values of type ${type}.`);
  }
  const values: JsonValue[] = [];
  for (const [i, item] of v.entries()) {
    const value = coerceValue(type, item);
    if (value === undefined) throw optionError(field, 'enum', `has a value that is not of type ${type}.`, { index: i });
    if (values.includes(value)) throw optionError(field, 'enum', `lists ${JSON.stringify(value)} twice.`, { index: i });
    values.push(value);
  }
  return values;
}

function parseDefault(field: string, type: FieldType, constraints: FieldConstraints, v: unknown): JsonValue {
  const value = coerceValue(type, v);
  if (value === undefined) throw optionError(field, 'default', `must be a value of type ${type}.`);
  const unstorable = unstorableJsonReason(value);
  if (unstorable) throw optionError(field, 'default', `cannot be stored: it ${unstorable}.`);
  try {
    checkValueSize(field, type, value, DEFAULT_LIMITS);
  } catch (e) {
    throw optionError(field, 'default', `is too large: ${(e as Error).message}`);
  }
  const broken = brokenConstraint(constraints, value);
  if (broken) throw optionError(field, 'default', `breaks the field's own "${broken.constraint}": it must be ${broken.mustBe}.`, { constraint: broken.constraint });
  return value;
}

/**
 * The constraint options of a field definition as a client sent it (`raw`), checked against the
 * field's type and against each other, timestamps normalized. Throws 400 naming the option.
 */
export function parseFieldConstraints(field: string, type: FieldType, raw: { [key: string]: unknown }): FieldConstraints {
  for (const option of CONSTRAINT_OPTIONS) {
    if (raw[option] !== undefined && !APPLIES_TO[option].includes(type)) {
      throw optionError(field, option, `does not apply to a ${type} field; it applies to ${APPLIES_TO[option].join(', ')}.`);
    }
  }
  const c: FieldConstraints = {};
  if (raw.min !== undefined) c.min = parseBound(field, 'min', type, raw.min);
  if (raw.max !== undefined) c.max = parseBound(field, 'max', type, raw.max);
  if (c.min !== undefined && c.max !== undefined && less(c.max, c.min)) throw optionError(field, 'min', `(${c.min}) is greater than "max" (${c.max}).`);
  if (raw.min_length !== undefined) c.min_length = parseLength(field, 'min_length', raw.min_length);
  if (raw.max_length !== undefined) c.max_length = parseLength(field, 'max_length', raw.max_length);
  if (c.min_length !== undefined && c.max_length !== undefined && c.min_length > c.max_length) {
    throw optionError(field, 'min_length', `(${c.min_length}) is greater than "max_length" (${c.max_length}).`);
  }
  if (raw.pattern !== undefined) {
    if (typeof raw.pattern !== 'string') throw optionError(field, 'pattern', 'must be a string.');
    const problem = patternProblem(raw.pattern);
    if (problem) throw optionError(field, 'pattern', `${problem}.`);
    c.pattern = raw.pattern;
  }
  if (raw.enum !== undefined) c.enum = parseEnum(field, type, raw.enum);
  if (raw.default !== undefined) c.default = parseDefault(field, type, c, raw.default);
  return c;
}

/** Code points of `s`, counting no further than `stop`. */
function codePoints(s: string, stop: number): number {
  let n = 0;
  for (let i = 0; i < s.length && n <= stop; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

function lengthOf(value: string | JsonValue[], stop: number): number {
  return typeof value === 'string' ? codePoints(value, stop) : value.length;
}

/** a < b for two numbers or two timestamps (canonical ISO strings order as they read). */
function less(a: JsonValue, b: JsonValue): boolean {
  if (typeof a === 'number' && typeof b === 'number') return a < b;
  return typeof a === 'string' && typeof b === 'string' && a < b;
}

/** The first constraint of `c` that a valid value of `type` breaks, or null. */
function brokenConstraint(c: FieldConstraints, value: JsonValue): Broken | null {
  if (c.min !== undefined && less(value, c.min)) {
    return { constraint: 'min', mustBe: `at least ${c.min}`, details: { limit: c.min } };
  }
  if (c.max !== undefined && less(c.max, value)) {
    return { constraint: 'max', mustBe: `at most ${c.max}`, details: { limit: c.max } };
  }
  if ((c.min_length !== undefined || c.max_length !== undefined) && (typeof value === 'string' || Array.isArray(value))) {
    const unit = typeof value === 'string' ? 'characters' : 'items';
    const length = lengthOf(value, c.max_length ?? c.min_length ?? 0);
    if (c.min_length !== undefined && length < c.min_length) {
      return { constraint: 'min_length', mustBe: `at least ${c.min_length} ${unit} long`, details: { limit: c.min_length } };
    }
    if (c.max_length !== undefined && length > c.max_length) {
      return { constraint: 'max_length', mustBe: `at most ${c.max_length} ${unit} long`, details: { limit: c.max_length } };
    }
  }
  if (c.pattern !== undefined && typeof value === 'string' && !patternMatches(c.pattern, value)) {
    return { constraint: 'pattern', mustBe: `a match of the pattern ${c.pattern}`, details: { pattern: c.pattern } };
  }
  if (c.enum !== undefined && !c.enum.includes(value)) {
    return { constraint: 'enum', mustBe: `one of ${c.enum.map((v) => JSON.stringify(v)).join(', ')}`, details: { allowed: c.enum } };
  }
  return null;
}

/**
 * Throws 400 `{field, constraint, …}` for the first of `names` whose value in `data` (already
 * of its field's type) breaks a constraint of its definition.
 */
export function checkConstraints(fields: { [field: string]: FieldDefinition }, data: { [field: string]: JsonValue }, names: Iterable<string>): void {
  for (const field of names) {
    const def = Object.hasOwn(fields, field) ? fields[field] : undefined;
    if (!def || !Object.hasOwn(data, field)) continue;
    const broken = brokenConstraint(def, data[field] as JsonValue);
    if (broken) {
      throw new InvalidRequestError(`Field "${field}" must be ${broken.mustBe}.`, { field, constraint: broken.constraint, ...broken.details });
    }
  }
}

/** Adds the default of every field that has one and is not in `data` (a new record's fields). */
export function addDefaults(fields: { [field: string]: FieldDefinition }, data: { [field: string]: JsonValue }): void {
  for (const [field, def] of Object.entries(fields)) {
    if (def.default === undefined || Object.hasOwn(data, field)) continue;
    data[field] = typeof def.default === 'object' && def.default !== null ? structuredClone(def.default) : def.default;
  }
}
