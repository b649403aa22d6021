/**
 * JSON values every store keeps alike. SQLite stores any JSON; MongoDB stores BSON, which
 * refuses or changes a few shapes: a key `_bsontype` (the driver reads it as a BSON type tag),
 * a NUL byte in a key (BSON keys are C strings), an object with `$ref`/`$id`/`$db` (read back as
 * a DBRef), and nesting beyond 100 levels. Strings are UTF-8 in BSON, so a lone UTF-16
 * surrogate (JSON allows `"\ud800"`) becomes U+FFFD on MongoDB while SQLite keeps it, and two
 * values that differ only there would collide on a unique field on one store only. Plinth
 * refuses them all on every store, so a client gets the same 400 whichever store a deployment runs.
 */

/** Deepest nesting of objects and arrays inside one stored value (a record field, user metadata). */
export const MAX_VALUE_DEPTH = 64;

const DBREF_KEYS = new Set(['$ref', '$id', '$db']);

/**
 * False when `s` has a UTF-16 surrogate not in a pair: `String.prototype.isWellFormed` (Node 20;
 * typed from TypeScript's ES2024 lib), native and 2–3× faster than a `/\p{Cs}/u` test.
 */
const wellFormed = (s: string): boolean => (s as string & { isWellFormed(): boolean }).isWellFormed();
const NOT_UNICODE = 'has a string that is not valid Unicode (a lone UTF-16 surrogate)';

/** Whether a string anywhere in `value` (keys included) has a lone surrogate. */
export function hasLoneSurrogate(value: unknown): boolean {
  if (typeof value === 'string') return !wellFormed(value);
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(hasLoneSurrogate);
  return Object.entries(value).some(([k, v]) => !wellFormed(k) || hasLoneSurrogate(v));
}

/** Why `value` cannot be stored alike on every store, or null when it can. */
export function unstorableJsonReason(value: unknown): string | null {
  return check(value, 0);
}

function check(v: unknown, depth: number): string | null {
  if (typeof v === 'string') return wellFormed(v) ? null : NOT_UNICODE;
  if (v === null || typeof v !== 'object') return null;
  if (depth >= MAX_VALUE_DEPTH) return `nests deeper than ${MAX_VALUE_DEPTH} levels`;
  if (Array.isArray(v)) {
    for (const x of v) {
      const why = check(x, depth + 1);
      if (why) return why;
    }
    return null;
  }
  for (const [k, x] of Object.entries(v)) {
    if (k === '_bsontype') return 'has a key "_bsontype"';
    if (k.includes('\u0000')) return 'has a key containing a NUL character';
    if (DBREF_KEYS.has(k)) return `has a key "${k}" (reserved by MongoDB for references)`;
    if (!wellFormed(k)) return NOT_UNICODE;
    const why = check(x, depth + 1);
    if (why) return why;
  }
  return null;
}
