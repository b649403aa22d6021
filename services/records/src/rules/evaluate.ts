import type { JsonValue, RecordDoc } from '@plinth/shared';
import type { AuthInfo } from '../domain/access-policy';
import type { Ref, RuleComparisonOp, RuleExpr } from './ast';
import { PENDING, type LookupReader } from './lookup-reader';
import { comparisonHolds } from './matches-predicate';
import { fieldValue } from './values';

/**
 * Full evaluation of a rule (write rules, and the in-memory check of read rules).
 *
 * Errors are values, as in CEL: reading `auth.uid` (or any `auth.*`) without a user token, or
 * using a non-boolean as a condition, yields ERROR. A comparison with an ERROR operand is ERROR,
 * `!ERROR` is ERROR, `false && ERROR` is false and `true || ERROR` is true. A rule allows only
 * when it evaluates to exactly `true`; ERROR denies. Nothing here throws for bad data.
 */
export const ERROR: unique symbol = Symbol('rule error');
export type RuleValue = JsonValue | typeof ERROR;

export interface RuleBindings {
  auth: AuthInfo | null;
  now: Date;
  /** The stored record (read, update, delete). */
  record?: RecordDoc;
  /** The record as it would be after the write (create, update). */
  data?: RecordDoc;
  /** Reads other records for get() and exists(); without it every lookup is an ERROR. */
  lookup?: LookupReader;
}

/** True only when the rule evaluates to `true` under the bindings. */
export function evaluateRule(expr: RuleExpr, bindings: RuleBindings): boolean {
  return evalValue(expr, bindings) === true;
}

export function refValue(ref: Ref, b: RuleBindings): RuleValue {
  switch (ref.kind) {
    case 'auth':
      // Only ever compared with null (validation enforces it); the object stands for "signed in".
      return b.auth === null ? null : { uid: b.auth.uid };
    case 'auth-member':
      return b.auth === null ? ERROR : b.auth[ref.name];
    case 'claim':
      return b.auth === null ? ERROR : fieldValue(b.auth.claims, ref.name);
    case 'request-time':
      return b.now.toISOString();
    case 'record':
      return b.record === undefined ? ERROR : memberOf(fieldValue(b.record, ref.field), ref.member);
    case 'data':
      return b.data === undefined ? ERROR : memberOf(fieldValue(b.data, ref.field), ref.member);
  }
}

/** `value.member` of a file field's metadata; ERROR when there is no file. */
function memberOf(value: RuleValue, member: string | undefined): RuleValue {
  if (member === undefined) return value;
  if (value === null || value === ERROR || typeof value !== 'object' || Array.isArray(value)) return ERROR;
  return Object.hasOwn(value, member) ? (value[member] as JsonValue) : ERROR;
}

/** A comparison under the same semantics as Predicate JSON (an ERROR operand gives ERROR). */
export function compareValues(op: RuleComparisonOp, left: RuleValue, right: RuleValue): RuleValue {
  if (left === ERROR || right === ERROR) return ERROR;
  return comparisonHolds(op, left, right);
}

/** CEL's commutative `&&`: false wins over ERROR. */
export function andValues(l: RuleValue, r: RuleValue): RuleValue {
  if (l === false || r === false) return false;
  return l === true && r === true ? true : ERROR;
}

/** CEL's commutative `||`: true wins over ERROR. */
export function orValues(l: RuleValue, r: RuleValue): RuleValue {
  if (l === true || r === true) return true;
  return l === false && r === false ? false : ERROR;
}

/** The value of any expression (a condition yields true, false or ERROR). */
export function evaluateValue(expr: RuleExpr, b: RuleBindings): RuleValue {
  return evalValue(expr, b);
}

/**
 * get(c, id): the record or null; get(c, id).field: the field (null when the record has no such
 * field, ERROR when the record is missing); exists(c, id): true or false. An id that is not a
 * string names no record. A lookup not read yet (PENDING) is an ERROR for this evaluation.
 */
function lookupValue(expr: Extract<RuleExpr, { type: 'lookup' }>, b: RuleBindings): RuleValue {
  const id = evalValue(expr.id, b);
  if (id === ERROR || b.lookup === undefined) return ERROR;
  const found = typeof id === 'string' && id !== '' ? b.lookup.read(expr.collection, id) : null;
  if (found === PENDING) return ERROR;
  if (expr.fn === 'exists') return found !== null;
  if (expr.field === undefined) return found;
  return found === null ? ERROR : fieldValue(found, expr.field);
}

function evalValue(expr: RuleExpr, b: RuleBindings): RuleValue {
  switch (expr.type) {
    case 'lookup':
      return lookupValue(expr, b);
    case 'literal':
      return expr.value;
    case 'list': {
      const items: JsonValue[] = [];
      for (const item of expr.items) {
        const v = evalValue(item, b);
        if (v === ERROR) return ERROR;
        items.push(v);
      }
      return items;
    }
    case 'ref':
      return refValue(expr.ref, b);
    case 'compare':
      return compareValues(expr.op, evalValue(expr.left, b), evalValue(expr.right, b));
    case 'and':
      return andValues(asBool(evalValue(expr.left, b)), asBool(evalValue(expr.right, b)));
    case 'or':
      return orValues(asBool(evalValue(expr.left, b)), asBool(evalValue(expr.right, b)));
    case 'not': {
      const v = asBool(evalValue(expr.arg, b));
      return v === ERROR ? ERROR : !v;
    }
  }
}

function asBool(v: RuleValue): boolean | typeof ERROR {
  return typeof v === 'boolean' ? v : ERROR;
}
