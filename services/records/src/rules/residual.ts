import type { ComparisonOp, JsonValue, Predicate } from '@plinth/shared';
import type { AuthInfo } from '../domain/access-policy';
import type { RuleComparisonOp, RuleExpr } from './ast';
import type { LookupReader } from './lookup-reader';
import { ERROR, compareValues, evaluateRule, evaluateValue, refValue, type RuleBindings, type RuleValue } from './evaluate';
import { andP, notP, orP } from './predicate-algebra';

/**
 * Partial evaluation of a read rule: `auth` and `request` are bound, `record.*` is not. The
 * result is a Predicate that holds for a record exactly when the rule, fully evaluated with that
 * record, is `true` (the property test checks this).
 *
 * Each sub-expression yields two predicates: `t`, "it evaluates to true", and `f`, "it
 * evaluates to false". They differ from each other's negation only where a sub-expression is
 * an ERROR (e.g. `auth.uid` without a user token), which is neither — so `!(auth.uid ==
 * record.owner)` denies an anonymous caller instead of allowing everything.
 */
export function residualPredicate(expr: RuleExpr, auth: AuthInfo | null, now: Date, lookup?: LookupReader): Predicate {
  return truth(expr, { auth, now, ...(lookup ? { lookup } : {}) }).t;
}

interface Truth {
  t: Predicate;
  f: Predicate;
}

const ERROR_TRUTH: Truth = { t: false, f: false };

function constTruth(v: RuleValue): Truth {
  return typeof v === 'boolean' ? { t: v, f: !v } : ERROR_TRUTH;
}

function truth(expr: RuleExpr, b: RuleBindings): Truth {
  switch (expr.type) {
    case 'literal':
    case 'list':
      return constTruth(expr.type === 'literal' ? expr.value : ERROR);
    case 'ref':
      if (expr.ref.kind === 'record') {
        return { t: [expr.ref.field, '==', true], f: [expr.ref.field, '==', false] };
      }
      return constTruth(refValue(expr.ref, b));
    case 'lookup':
      // Validation keeps record fields out of a read rule's lookups: each is one value for every record.
      return constTruth(evaluateValue(expr, b));
    case 'compare':
      return compareTruth(expr.op, expr.left, expr.right, b);
    case 'and': {
      const l = truth(expr.left, b);
      const r = truth(expr.right, b);
      return { t: andP(l.t, r.t), f: orP(l.f, r.f) };
    }
    case 'or': {
      const l = truth(expr.left, b);
      const r = truth(expr.right, b);
      return { t: orP(l.t, r.t), f: andP(l.f, r.f) };
    }
    case 'not': {
      const a = truth(expr.arg, b);
      return { t: a.f, f: a.t };
    }
  }
}

type Operand = { field: string } | { value: RuleValue };

function operand(expr: RuleExpr, b: RuleBindings): Operand {
  if (expr.type === 'ref' && expr.ref.kind === 'record') return { field: expr.ref.field };
  if (expr.type === 'literal') return { value: expr.value };
  if (expr.type === 'ref') return { value: refValue(expr.ref, b) };
  if (expr.type === 'lookup') return { value: evaluateValue(expr, b) };
  if (expr.type === 'list') {
    const items: JsonValue[] = [];
    for (const item of expr.items) {
      const o = operand(item, b);
      if (!('value' in o)) throw new TypeError('record field inside a list in a read rule');
      if (o.value === ERROR) return { value: ERROR };
      items.push(o.value);
    }
    return { value: items };
  }
  // Conditions as operands are refused by validation; evaluate them as constants all the same.
  return { value: evaluateRule(expr, b) };
}

const FLIPPED: Record<'<' | '<=' | '>' | '>=', ComparisonOp> = { '<': '>', '<=': '>=', '>': '<', '>=': '<=' };

function compareTruth(op: RuleComparisonOp, leftExpr: RuleExpr, rightExpr: RuleExpr, b: RuleBindings): Truth {
  const left = operand(leftExpr, b);
  const right = operand(rightExpr, b);
  if ('value' in left && 'value' in right) return constTruth(compareValues(op, left.value, right.value));
  if ('field' in left && 'field' in right) throw new TypeError('read rule compares two record fields');
  const fieldOnLeft = 'field' in left;
  const field = 'field' in left ? left.field : (right as { field: string }).field;
  const value = 'value' in left ? left.value : (right as { value: RuleValue }).value;
  if (value === ERROR) return ERROR_TRUTH;
  const t = fieldPredicate(op, field, value, fieldOnLeft);
  return { t, f: notP(t) };
}

/** `record.field OP value` (or `value OP record.field`) as a predicate; type mismatches fold to false. */
function fieldPredicate(op: RuleComparisonOp, field: string, value: JsonValue, fieldOnLeft: boolean): Predicate {
  switch (op) {
    case '==':
    case '!=':
      return [field, op, value];
    case 'in':
      if (!fieldOnLeft) return [field, 'array-contains', value];
      return Array.isArray(value) ? membership(field, value) : false;
    case 'contains':
    case 'starts-with':
      // Validation keeps the record field the receiver (`record.f.contains(x)`).
      return fieldOnLeft && typeof value === 'string' ? [field, op, value] : false;
    default:
      if (typeof value !== 'number' && typeof value !== 'string') return false;
      return [field, fieldOnLeft ? op : FLIPPED[op], value];
  }
}

/**
 * `record.field in list`, in the form stores take: an empty list is false, and `null` elements
 * become `field == null` (the same records: a missing field is null), because stores accept
 * only non-empty lists of non-null values for `in`.
 */
function membership(field: string, list: JsonValue[]): Predicate {
  const present = list.filter((v) => v !== null);
  const parts: Predicate[] = present.length > 0 ? [[field, 'in', present]] : [];
  if (present.length < list.length) parts.unshift([field, '==', null]);
  return orP(...parts);
}
