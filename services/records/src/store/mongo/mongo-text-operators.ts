/**
 * `contains` and `starts-with` as a MongoDB `$regex` (docs/records.md "Queries"). The operand is
 * never used as a pattern: every regular-expression syntax character is escaped, and each ASCII
 * letter becomes a class of its two cases (`[aA]`). That is the reference semantics
 * (shared/src/predicate/text-match.ts, ASCII case folded only) — the `i` flag would also fold
 * non-ASCII letters (`É` = `é`), which SQLite's lower() does not, and the stores must agree.
 * `starts-with` is anchored with `^` (the regex then only has to look at each value's start).
 */

/** Characters with a meaning in a PCRE or JavaScript (`u`) pattern outside a class. */
const SYNTAX = new Set('\\^$.*+?()[]{}|/');

/** One character of the operand as a pattern matching only itself (ASCII letters in either case). */
function literalChar(c: string): string {
  if (/[A-Za-z]/.test(c)) return `[${c.toLowerCase()}${c.toUpperCase()}]`;
  if (SYNTAX.has(c)) return `\\${c}`;
  // A NUL cannot be sent inside a pattern: `\x00` matches it.
  return c === '\0' ? '\\x00' : c;
}

/** The operand as a pattern matching itself literally, ASCII letters in either case. */
export function literalPattern(operand: string): string {
  return Array.from(operand, literalChar).join('');
}

export function textRegex(op: 'contains' | 'starts-with', operand: string): { $regex: string } {
  return { $regex: op === 'starts-with' ? `^${literalPattern(operand)}` : literalPattern(operand) };
}
