import type { JsonValue } from '../types';

/**
 * The text operators `contains` and `starts-with` (docs/records.md "Queries"): both hold only when
 * the field's value and the operand are strings, and compare them ignoring the case of ASCII
 * letters only (`A`–`Z` = `a`–`z`; `É` ≠ `é`). ASCII folding is what every store computes the
 * same way — SQLite's lower() and LIKE fold ASCII only, and the MongoDB adapter spells each
 * ASCII letter as a `[aA]` class — while Unicode case folding differs between engines.
 */

/** The string with `A`–`Z` lowered and every other character as it is. */
export function foldAscii(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

export function textContains(field: JsonValue, value: JsonValue): boolean {
  return typeof field === 'string' && typeof value === 'string' && foldAscii(field).includes(foldAscii(value));
}

export function textStartsWith(field: JsonValue, value: JsonValue): boolean {
  return typeof field === 'string' && typeof value === 'string' && foldAscii(field).startsWith(foldAscii(value));
}
