/**
 * The `pattern` option of text fields: regular expressions run by re2js, a port of RE2, whose
 * matching time grows linearly with the value's length whatever the pattern (no backtracking,
 * so `(a+)+$` against 50 kB of `a`s is one pass, not 2^50000 tries). What RE2 does not support
 * (lookahead, backreferences) is refused when the collection is saved.
 *
 * The time is linear in the value and in the compiled program's size, so both are bounded: the
 * value by the text size limit (64 kB by default), the program by MAX_PATTERN_LENGTH characters
 * and MAX_PROGRAM_SIZE instructions (`x{1000}` is short but compiles to a thousand). Measured
 * with re2js on one core: the worst patterns we found within these bounds take ~100 ms on a
 * 64 kB value, usual ones well under 10 ms.
 */
import { RE2JS } from 're2js';

export const MAX_PATTERN_LENGTH = 256;
export const MAX_PROGRAM_SIZE = 2000;
/** Compiled patterns kept for reuse: every write to a field with a pattern tests it. */
const CACHE_SIZE = 500;

const compiled = new Map<string, RE2JS>();

/** Why RE2 cannot take `pattern` within the bounds, or null when it can. */
export function patternProblem(pattern: string): string | null {
  if (pattern.length > MAX_PATTERN_LENGTH) return `is longer than ${MAX_PATTERN_LENGTH} characters`;
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern);
  } catch (e) {
    return `is not a regular expression RE2 accepts (${(e as Error).message})`;
  }
  const size = programSize(re);
  if (size > MAX_PROGRAM_SIZE) return `compiles to ${size} instructions, more than ${MAX_PROGRAM_SIZE}; use fewer or smaller repeat counts`;
  remember(pattern, re);
  return null;
}

/** Whether `value` contains a match of `pattern` (checked by patternProblem when it was saved). */
export function patternMatches(pattern: string, value: string): boolean {
  let re = compiled.get(pattern);
  if (!re) {
    re = RE2JS.compile(pattern);
    remember(pattern, re);
  }
  return re.test(value);
}

/** Instructions of the compiled program (re2js exposes it untyped). */
function programSize(re: RE2JS): number {
  const prog: unknown = re.re2().prog;
  const numInst = (prog as { numInst?: unknown } | null)?.numInst;
  if (typeof numInst !== 'function') throw new Error('re2js no longer exposes the program size');
  return Number(numInst.call(prog));
}

function remember(pattern: string, re: RE2JS): void {
  if (compiled.size >= CACHE_SIZE) compiled.delete(compiled.keys().next().value as string);
  compiled.set(pattern, re);
}
