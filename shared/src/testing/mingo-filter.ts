/**
 * A filter as the server receives and evaluates it, for the mingo stand-in (mingo-db.ts). Where
 * mingo alone answers differently from a MongoDB server, the filter is rewritten so that it
 * answers like the server:
 *
 * - the driver sends every filter BSON-encoded: `undefined` arrives as null, a lone surrogate
 *   as U+FFFD, a RegExp with the flags BSON keeps;
 * - strings compare in UTF-8 byte order (mingo-bson.ts `utf8Ordered`), but a regular expression
 *   is matched against the stored string itself, code point by code point, as the server's
 *   PCRE does in UTF-8 mode (so an emoji or a private-use character matches, and `.` is one
 *   character);
 * - `$elemMatch` with comparisons on scalars (what `array-contains` compiles to) compares each
 *   element as a whole: an element that is itself an array does not match, while mingo would
 *   look inside it.
 *
 * Test-only.
 */
import { BSON, type Document } from 'mongodb';
import { Context } from 'mingo';
import { utf8Ordered } from './mingo-bson';

type QueryOperators = Parameters<Context['addQueryOps']>[0];
type QueryOptions = NonNullable<ConstructorParameters<typeof import('mingo').Query>[1]>;

/** Inverse of mingo-bson.ts `utf8Key` on strings that went through BSON (no lone surrogates). */
function fromUtf8Key(s: string): string {
  if (!/[\uD800-\uFBFF]/.test(s)) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const u = s.charCodeAt(i);
    if (u >= 0xf800 && u <= 0xfbff) out += String.fromCharCode(u - 0x2000);
    else if (u >= 0xd800 && u <= 0xf7ff && !(u >= 0xdc00 && u <= 0xdfff && i > 0 && isShiftedHigh(s.charCodeAt(i - 1)))) out += String.fromCharCode(u + 0x800);
    else out += s[i];
  }
  return out;
}

function isShiftedHigh(u: number): boolean {
  return u >= 0xf800 && u <= 0xfbff;
}

/** PCRE in UTF-8 mode: the pattern sees code points. Patterns JavaScript refuses with `u` run without it. */
function serverRegex(re: RegExp): RegExp {
  const flags = re.flags.replace(/[gyu]/g, '');
  try {
    return new RegExp(re.source, `${flags}u`);
  } catch {
    return new RegExp(re.source, flags);
  }
}

/**
 * The values a path reaches, as the server walks it: through arrays of documents, and at the
 * end the value and, if it is an array, its elements.
 */
function valuesAt(v: unknown, path: string[]): unknown[] {
  if (path.length === 0) return Array.isArray(v) ? [v, ...v] : [v];
  if (Array.isArray(v)) {
    const [head, ...rest] = path as [string, ...string[]];
    const byIndex = /^\d+$/.test(head) ? valuesAt(v[Number(head)], rest) : [];
    return [...byIndex, ...v.flatMap((e) => (e !== null && typeof e === 'object' && !Array.isArray(e) ? valuesAt(e, path) : []))];
  }
  if (v === null || typeof v !== 'object') return [];
  const [head, ...rest] = path as [string, ...string[]];
  return valuesAt((v as { [k: string]: unknown })[head], rest);
}

/** `{field: {$utf8Regex: re}}`: `$regex` on the original string of a utf8Ordered one. */
const utf8Regex = (selector: string, value: unknown): ((o: Document) => boolean) => {
  const re = serverRegex(value as RegExp);
  const path = selector.split('.');
  return (o) => valuesAt(o, path).some((x) => typeof x === 'string' && re.test(fromUtf8Key(x)));
};

/** Query options that add `$utf8Regex` to mingo's operators. */
export const SERVER_QUERY_OPTIONS = { context: Context.init().addQueryOps({ $utf8Regex: utf8Regex } as unknown as QueryOperators) } as QueryOptions;

const SCALAR_COMPARISONS = new Set(['$eq', '$in', '$gt', '$gte', '$lt', '$lte']);

function isOperatorObject(v: unknown): v is { [op: string]: unknown } {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof RegExp) && !(v instanceof Date) && Object.keys(v).length > 0 && Object.keys(v).every((k) => k.startsWith('$'));
}

/** `$elemMatch: {$eq: 'x'}` compares elements whole: add "the element is not an array". */
function wholeElements(cond: { [op: string]: unknown }): { [op: string]: unknown } {
  const scalar = (v: unknown) => !Array.isArray(v);
  const compares = Object.entries(cond).every(([op, v]) => SCALAR_COMPARISONS.has(op) && (op === '$in' ? Array.isArray(v) && v.every(scalar) : scalar(v)));
  return compares ? { ...cond, $not: { $type: 'array' } } : cond;
}

function rewrite(v: unknown): unknown {
  if (v instanceof RegExp) return { $utf8Regex: v };
  if (Array.isArray(v)) return v.map(rewrite);
  if (v === null || typeof v !== 'object' || v instanceof Date) return v;
  const o = v as { [k: string]: unknown };
  if (typeof o.$regex === 'string' || o.$regex instanceof RegExp) {
    const { $regex, $options, ...rest } = o;
    const re = $regex instanceof RegExp ? $regex : new RegExp($regex as string, String($options ?? '').replace(/[^ims]/g, ''));
    return { $utf8Regex: re, ...(rewrite(rest) as object) };
  }
  const out: { [k: string]: unknown } = {};
  for (const [k, x] of Object.entries(o)) {
    out[k] = k === '$elemMatch' && isOperatorObject(x) ? wholeElements(rewrite(x) as { [op: string]: unknown }) : rewrite(x);
  }
  return out;
}

/** The filter as the server evaluates it, to run with SERVER_QUERY_OPTIONS over utf8Ordered documents. */
export function serverFilter(filter: Document): Document {
  const sent = BSON.deserialize(BSON.serialize({ filter }, { ignoreUndefined: false })).filter as Document;
  return utf8Ordered(rewrite(sent)) as Document;
}
