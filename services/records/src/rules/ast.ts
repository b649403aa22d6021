import type { JsonValue } from '@plinth/shared';

/** The four operations a collection has a rule for. */
export type RuleKind = 'read' | 'create' | 'update' | 'delete';
export const RULE_KINDS: readonly RuleKind[] = ['read', 'create', 'update', 'delete'];

/**
 * The comparison operators of the rule language; `contains` and `starts-with` are written as the
 * methods `x.contains(y)` and `x.startsWith(y)` (text, ASCII case ignored, as in `where`).
 */
export type RuleComparisonOp = '==' | '!=' | '<' | '<=' | '>' | '>=' | 'in' | 'contains' | 'starts-with';

/** The `auth.<member>` names a rule may read besides `auth.claims.<name>`. */
export type AuthMember = 'uid' | 'email' | 'email_verified';

/** A name the rule resolved through the allowlist (see parse.ts). */
export type Ref =
  | { kind: 'auth' }
  | { kind: 'auth-member'; name: AuthMember }
  | { kind: 'claim'; name: string }
  | { kind: 'request-time' }
  /** `member`: one key of a file field's metadata (`data.cover.size`, docs/files.md "Rules"). */
  | { kind: 'record'; field: string; member?: string }
  | { kind: 'data'; field: string; member?: string };

/**
 * A parsed rule. Every node keeps `pos`, the 0-based character offset in the rule string where
 * it starts, so validation errors can point at it.
 */
export type RuleExpr =
  | { type: 'literal'; value: JsonValue; pos: number }
  | { type: 'list'; items: RuleExpr[]; pos: number }
  | { type: 'ref'; ref: Ref; pos: number }
  | { type: 'compare'; op: RuleComparisonOp; left: RuleExpr; right: RuleExpr; pos: number }
  | { type: 'and' | 'or'; left: RuleExpr; right: RuleExpr; pos: number }
  | { type: 'not'; arg: RuleExpr; pos: number }
  /**
   * `get(collection, id)` (the record, or null), `get(collection, id).field`, or
   * `exists(collection, id)`: a read of another record (docs/rules.md "Lookups").
   */
  | { type: 'lookup'; fn: LookupFn; collection: string; id: RuleExpr; field?: string; pos: number };

/** The functions that read other records. */
export type LookupFn = 'get' | 'exists';

/** A problem in a rule string, located at `position`. Turned into a 400 by the policy. */
export class RuleSyntaxError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(message);
    this.name = 'RuleSyntaxError';
  }
}
