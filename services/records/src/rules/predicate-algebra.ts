import type { Predicate } from '@plinth/shared';

/**
 * Builders for Predicate JSON that simplify as they go: `true && P` → P, `false || P` → P,
 * `false && P` → false, `true || P` → true, nested and/or flattened, and negations of
 * comparisons turned into the opposite operator where one exists (`==`/`!=`, `in`/`not-in`),
 * and negated and/or pushed inwards (De Morgan).
 * Ordering operators are never flipped under `not`, because a type mismatch makes both
 * `a < b` and `a >= b` false.
 */

export function andP(...parts: Predicate[]): Predicate {
  return combine('and', parts);
}

export function orP(...parts: Predicate[]): Predicate {
  return combine('or', parts);
}

function combine(kind: 'and' | 'or', parts: Predicate[]): Predicate {
  const absorbing = kind === 'or'; // false absorbs an and, true absorbs an or
  const out: Predicate[] = [];
  for (const p of parts) {
    if (p === absorbing) return absorbing;
    if (p === !absorbing) continue;
    out.push(...(membersOf(kind, p) ?? [p]));
  }
  if (out.length === 0) return !absorbing;
  if (out.length === 1) return out[0] as Predicate;
  return kind === 'and' ? { and: out } : { or: out };
}

/** The operands of `p` when it is itself an `and` (or an `or`), so nested ones flatten. */
function membersOf(kind: 'and' | 'or', p: Predicate): Predicate[] | undefined {
  if (typeof p !== 'object' || Array.isArray(p)) return undefined;
  if (kind === 'and') return 'and' in p ? p.and : undefined;
  return 'or' in p ? p.or : undefined;
}

const OPPOSITE = { '==': '!=', '!=': '==', in: 'not-in', 'not-in': 'in' } as const;

export function notP(p: Predicate): Predicate {
  if (typeof p === 'boolean') return !p;
  if (Array.isArray(p)) {
    const [field, op, value] = p;
    if (op in OPPOSITE) return [field, OPPOSITE[op as keyof typeof OPPOSITE], value];
    return { not: p };
  }
  if ('not' in p) return p.not;
  // De Morgan (exact: predicates are two-valued).
  if ('and' in p) return orP(...p.and.map(notP));
  return andP(...p.or.map(notP));
}
