import type { FieldDefinition, FieldType, JsonValue } from '@plinth/shared';
import { RuleSyntaxError, type Ref, type RuleExpr, type RuleKind } from './ast';
import { valueTypeOf } from '../domain/relation-field';

/** What a rule may read of a file field's metadata (`data.cover.size`), and its type. */
const FILE_MEMBERS: Readonly<{ [member: string]: FieldType }> = {
  name: 'text',
  original_name: 'text',
  size: 'integer',
  type: 'text',
  sha256: 'text',
  created_at: 'timestamp',
};

/** The system fields every record has, with the type rules see them as. */
export const SYSTEM_FIELDS: Readonly<Record<string, FieldType>> = {
  id: 'text',
  version: 'integer',
  created_at: 'timestamp',
  updated_at: 'timestamp',
};

/**
 * Checks a parsed rule against its operation and the collection's fields:
 * - `record.*` is refused in create rules, `data.*` in read and delete rules;
 * - fields must be declared (or one of id, version, created_at, updated_at);
 * - conditions (operands of `&& || !`, and the rule itself) must be boolean: a comparison,
 *   `true`/`false`, `auth.email_verified`, a claim, or a boolean/json field;
 * - comparison operands must be values (literals, lists, names); a declared field is compared
 *   only with literals of its type (or null); bare `auth` only with `== null`
 *   or `!= null`; ordering against a literal needs a number or a string; the right side of `in`
 *   must be able to be a list;
 * - read rules only: at most one side of a comparison may depend on the record (so the rule can
 *   become a store predicate), a list may not hold record fields, and a record field is not
 *   compared with `==`/`!=` to a list literal, nor searched for a list or null with `in`
 *   (stores compare fields with single values).
 * @throws RuleSyntaxError at the offending position.
 */
export function validateRuleExpr(expr: RuleExpr, kind: RuleKind, fields: { [name: string]: FieldDefinition }): void {
  new Validator(kind, fields).condition(expr);
}

class Validator {
  constructor(
    private readonly kind: RuleKind,
    private readonly fields: { [name: string]: FieldDefinition },
  ) {}

  condition(e: RuleExpr): void {
    switch (e.type) {
      case 'literal':
        if (typeof e.value !== 'boolean') fail(`expected a condition, found ${JSON.stringify(e.value)}`, e);
        return;
      case 'list':
        return fail('expected a condition, found a list', e);
      case 'ref': {
        if (e.ref.kind === 'auth') fail('auth is not a condition; use auth != null', e);
        const type = this.ref(e.ref, e.pos);
        if (type !== 'boolean' && type !== 'json' && type !== 'unknown') {
          fail(`${describe(e.ref)} is not a condition; compare it, e.g. ${describe(e.ref)} == …`, e);
        }
        return;
      }
      case 'compare':
        return this.comparison(e);
      case 'and':
      case 'or':
        this.condition(e.left);
        return this.condition(e.right);
      case 'not':
        return this.condition(e.arg);
      case 'lookup': {
        const type = this.lookup(e);
        if (type === 'json') fail(`${describeLookup(e)} is a record, not a condition; compare it, e.g. ${describeLookup(e)} != null`, e);
        return;
      }
    }
  }

  /**
   * A lookup's id must be a value. In a read rule it may not depend on the record: a read rule
   * is a filter the store applies to many records in one query, so each lookup is read once,
   * before the rule becomes a predicate, and so must have the same answer for every record.
   */
  private lookup(e: Extract<RuleExpr, { type: 'lookup' }>): FieldType | 'unknown' {
    this.value(e.id);
    if (this.kind === 'read' && dependsOnRecord(e.id)) {
      fail(
        `a read rule cannot use ${describeLookup(e)}: its arguments depend on the record, and a read rule is a filter over many records; ` +
          'look up records named by auth or constants instead (docs/rules.md "Lookups")',
        e,
      );
    }
    if (e.fn === 'exists') return 'boolean';
    return e.field === undefined ? 'json' : 'unknown';
  }

  private comparison(e: Extract<RuleExpr, { type: 'compare' }>): void {
    const leftType = this.value(e.left);
    const rightType = this.value(e.right);
    this.literalsFit(e, leftType, rightType);
    for (const [side, other] of [
      [e.left, e.right],
      [e.right, e.left],
    ] as const) {
      if (side.type === 'ref' && side.ref.kind === 'auth') {
        if ((e.op !== '==' && e.op !== '!=') || other.type !== 'literal' || other.value !== null) {
          fail('auth can only be compared with null (auth == null, auth != null)', side);
        }
      }
    }
    if (e.op === 'in') {
      const ok =
        e.right.type === 'list' ||
        (e.right.type !== 'literal' && (rightType === 'list' || rightType === 'json' || rightType === 'unknown'));
      if (!ok) fail('the right side of in must be a list', e.right);
    } else if (e.op === 'contains' || e.op === 'starts-with') {
      for (const side of [e.left, e.right]) {
        if (side.type === 'literal' && typeof side.value !== 'string') fail(`${methodName(e.op)} compares text, not ${JSON.stringify(side.value)}`, side);
        if (side.type === 'list') fail(`${methodName(e.op)} compares text, not lists`, side);
      }
      const receiver = this.value(e.left);
      if (receiver !== 'text' && receiver !== 'json' && receiver !== 'unknown') fail(`${methodName(e.op)} works on text, not on a ${receiver} value`, e.left);
    } else if (e.op !== '==' && e.op !== '!=') {
      for (const side of [e.left, e.right]) {
        if (side.type === 'literal' && typeof side.value !== 'number' && typeof side.value !== 'string') {
          fail(`${e.op} compares numbers, strings or timestamps, not ${JSON.stringify(side.value)}`, side);
        }
        if (side.type === 'list') fail(`${e.op} cannot compare lists`, side);
      }
    }
    if (this.kind === 'read') storableComparison(e);
  }

  /**
   * A declared field only ever holds values of its type (or null), so comparing it with a literal
   * of another type is always false: refused as a mistake. `in` checks each element of a list.
   */
  private literalsFit(e: Extract<RuleExpr, { type: 'compare' }>, leftType: FieldType | 'unknown', rightType: FieldType | 'unknown'): void {
    const pairs: Array<[field: RuleExpr, type: FieldType | 'unknown', other: RuleExpr]> =
      e.op === 'in' ? [[e.left, leftType, e.right]] : [[e.left, leftType, e.right], [e.right, rightType, e.left]];
    for (const [field, type, other] of pairs) {
      if (field.type !== 'ref' || (field.ref.kind !== 'record' && field.ref.kind !== 'data') || type === 'unknown') continue;
      const literals = e.op === 'in' ? (other.type === 'list' ? other.items : []) : [other];
      for (const lit of literals) {
        if (lit.type === 'literal' && !literalFits(type, lit.value)) {
          fail(`${describe(field.ref)} holds ${type} values; comparing it with ${JSON.stringify(lit.value)} is always false`, lit);
        }
      }
    }
  }

  /** Checks a comparison operand; returns its field type, 'list' for list literals, or 'unknown'. */
  private value(e: RuleExpr): FieldType | 'unknown' {
    switch (e.type) {
      case 'literal':
        return 'unknown';
      case 'list':
        for (const item of e.items) {
          this.value(item);
          if (this.kind === 'read' && dependsOnRecord(item)) {
            fail('a read rule cannot put record fields inside a list', item);
          }
        }
        return 'list';
      case 'ref':
        return this.ref(e.ref, e.pos);
      case 'lookup':
        return this.lookup(e);
      default:
        return fail('a comparison operand must be a value (a literal, a list or a name), not a condition', e);
    }
  }

  private ref(ref: Ref, pos: number): FieldType | 'unknown' {
    switch (ref.kind) {
      case 'auth':
        return 'json';
      case 'auth-member':
        return ref.name === 'email_verified' ? 'boolean' : 'text';
      case 'claim':
        return 'unknown';
      case 'request-time':
        return 'timestamp';
      case 'record':
        if (this.kind === 'create') failAt('record is not available in a create rule; use data.<field>', pos);
        return ref.member === undefined ? this.field(ref.field, pos) : this.fileMember(ref.field, ref.member, memberPos(ref, pos));
      case 'data':
        if (this.kind === 'read' || this.kind === 'delete') {
          failAt(`data is only available in create and update rules, not in a ${this.kind} rule; use record.<field>`, pos);
        }
        return ref.member === undefined ? this.field(ref.field, pos) : this.fileMember(ref.field, ref.member, memberPos(ref, pos));
    }
  }

  /** `<field>.<member>`: the metadata of a `file` field, in create, update and delete rules. */
  private fileMember(name: string, member: string, pos: number): FieldType {
    const def = Object.prototype.hasOwnProperty.call(this.fields, name) ? this.fields[name] : undefined;
    if (!def || def.type !== 'file') return failAt(`nested field access is only allowed on a file field's metadata (${name} is not a file field)`, pos);
    if (this.kind === 'read') return failAt(`a read rule cannot use a file's metadata (${name}.${member}): it cannot become a query`, pos);
    const type = Object.prototype.hasOwnProperty.call(FILE_MEMBERS, member) ? FILE_MEMBERS[member] : undefined;
    if (!type) return failAt(`a file has no ${member}; use ${Object.keys(FILE_MEMBERS).join(', ')}`, pos);
    return type;
  }

  private field(name: string, pos: number): FieldType {
    const system = Object.prototype.hasOwnProperty.call(SYSTEM_FIELDS, name) ? SYSTEM_FIELDS[name] : undefined;
    if (system) return system;
    const def = Object.prototype.hasOwnProperty.call(this.fields, name) ? this.fields[name] : undefined;
    if (!def) return failAt(`unknown field ${name}`, pos);
    return valueTypeOf(def);
  }
}

/** Read rules become store predicates: field OP single value, or a scalar searched in a list field. */
function storableComparison(e: Extract<RuleExpr, { type: 'compare' }>): void {
  if (dependsOnRecord(e.left) && dependsOnRecord(e.right)) {
    fail('a read rule cannot compare a record field with another record field: it cannot become a query', e);
  }
  if (e.op === 'in' && dependsOnRecord(e.right) && (e.left.type === 'list' || isNullLiteral(e.left))) {
    fail('a read rule can look for a string, number or boolean in a record list, not for a list or null', e.left);
  }
  if ((e.op === 'contains' || e.op === 'starts-with') && dependsOnRecord(e.right)) {
    fail(`a read rule can call ${methodName(e.op)} on a record field, not pass one to it: it cannot become a query`, e.right);
  }
  if (e.op === '==' || e.op === '!=') {
    const [side, other] = dependsOnRecord(e.left) ? [e.left, e.right] : [e.right, e.left];
    if (dependsOnRecord(side) && other.type === 'list') {
      fail(`a read rule can compare a record field with ${e.op} only to a single value, not a list: it cannot become a query`, other);
    }
  }
}

/** How a text operator is written in a rule. */
function methodName(op: 'contains' | 'starts-with'): string {
  return op === 'contains' ? 'contains()' : 'startsWith()';
}

function dependsOnRecord(e: RuleExpr): boolean {
  switch (e.type) {
    case 'ref':
      return e.ref.kind === 'record';
    case 'list':
      return e.items.some(dependsOnRecord);
    case 'literal':
      return false;
    case 'compare':
    case 'and':
    case 'or':
      return dependsOnRecord(e.left) || dependsOnRecord(e.right);
    case 'not':
      return dependsOnRecord(e.arg);
    case 'lookup':
      return dependsOnRecord(e.id);
  }
}

/** How an error message names a lookup: `get('rooms', record.room).members`. */
function describeLookup(e: Extract<RuleExpr, { type: 'lookup' }>): string {
  const id = e.id.type === 'ref' ? describe(e.id.ref) : e.id.type === 'literal' ? JSON.stringify(e.id.value) : '…';
  return `${e.fn}('${e.collection}', ${id})${e.field === undefined ? '' : `.${e.field}`}`;
}

function literalFits(type: FieldType, value: JsonValue): boolean {
  if (value === null) return true;
  switch (type) {
    case 'text':
    case 'timestamp':
      return typeof value === 'string';
    case 'number':
    case 'integer':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    case 'list':
      return Array.isArray(value);
    case 'json':
    case 'relation':
    case 'file':
    case 'files':
      return true;
  }
}

function isNullLiteral(e: RuleExpr): boolean {
  return e.type === 'literal' && e.value === null;
}

function describe(ref: Ref): string {
  switch (ref.kind) {
    case 'auth':
      return 'auth';
    case 'auth-member':
      return `auth.${ref.name}`;
    case 'claim':
      return `auth.claims.${ref.name}`;
    case 'request-time':
      return 'request.time';
    case 'record':
      return `record.${ref.field}${ref.member === undefined ? '' : `.${ref.member}`}`;
    case 'data':
      return `data.${ref.field}${ref.member === undefined ? '' : `.${ref.member}`}`;
  }
}

/** Where `.member` of `record.<field>.member` / `data.<field>.member` starts, for errors. */
function memberPos(ref: Extract<Ref, { kind: 'record' | 'data' }>, pos: number): number {
  return pos + ref.kind.length + 1 + ref.field.length + 1;
}

function fail(message: string, e: RuleExpr): never {
  throw new RuleSyntaxError(message, e.pos);
}

function failAt(message: string, pos: number): never {
  throw new RuleSyntaxError(message, pos);
}
