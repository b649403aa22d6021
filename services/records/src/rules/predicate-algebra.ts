import type { Predicate } from '@plinth/shared';

/**
 * Builders for Predicate JSON that simplify as they go: `true && P` → P, `false || P` → P,
 * `false && P` → false, `true || P` → true, nested and/or flattened, and negations of
 * comparisons turned into the opposite operator where one exists (`==`/`!=`, `in`/`not-in`).
 * Ordering operators are never flipped under `not`, because a type mismatch makes both
 * `a < b` and `a >= b` false.
 */

export function andP(...parts: Predicate[]): Predicate {
  const out: Predicate[] = [];
  for (const p of parts) {
    if (p === false) return false;
    if (p === true) continue;
    if (typeof p === 'object' && !Array.isArray(p) && 'and' in p) out.push(...p.and);
    else out.push(p);
  }
  if (out.length === 0) return true;
  return out.length === 1 ? (out[0] as Predicate) : { and: out };
}

export function orP(...parts: Predicate[]): Predicate {
  const out: Predicate[] = [];
  for (const p of parts) {
    if (p === true) return true;
    if (p === false) continue;
    if (typeof p === 'object' && !Array.isArray(p) && 'or' in p) out.push(...p.or);
    else out.push(p);
  }
  if (out.length === 0) return false;
  return out.length === 1 ? (out[0] as Predicate) : { or: out };
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
  return { not: p };
}
