import { InvalidRequestError, type Collection, type Predicate, type RecordDoc } from '@plinth/shared';
import type { AccessContext, AccessPolicy } from '../domain/access-policy';
import { RULE_KINDS, RuleSyntaxError, type RuleExpr, type RuleKind } from './ast';
import { evaluateRule, type RuleBindings } from './evaluate';
import { parseRule } from './parse';
import { residualPredicate } from './residual';
import { validateRuleExpr } from './validate';

export interface RulesPolicyOptions {
  /**
   * Called when a stored rule cannot be used at request time (it no longer validates against
   * the collection, or evaluation hit a bug). The request is denied either way; this is for logs.
   */
  onRuleFailure?: (info: { collection: string; rule: RuleKind; error: unknown }) => void;
}

/**
 * The security-rules engine behind the records service's AccessPolicy seam (docs/rules.md).
 * A secret key bypasses every rule; a missing rule denies; reads get a residual Predicate;
 * writes are fully evaluated. Rule strings are parsed once per process (cached by string).
 */
export function createRulesPolicy(opts: RulesPolicyOptions = {}) {
  const report = opts.onRuleFailure ?? (() => undefined);

  /** The compiled rule, or null when it is missing or unusable (both deny). */
  function compiled(collection: Pick<Collection, 'name' | 'fields' | 'rules'>, kind: RuleKind): RuleExpr | null {
    const source = collection.rules[kind];
    if (typeof source !== 'string') return null;
    try {
      const expr = parseRule(source);
      validateRuleExpr(expr, kind, collection.fields);
      return expr;
    } catch (error) {
      report({ collection: collection.name, rule: kind, error });
      return null;
    }
  }

  function allows(ctx: AccessContext, collection: Collection, kind: RuleKind, docs: Pick<RuleBindings, 'record' | 'data'>): boolean {
    if (ctx.keyKind === 'secret') return true;
    const expr = compiled(collection, kind);
    if (expr === null) return false;
    try {
      return evaluateRule(expr, { auth: ctx.auth, now: ctx.now, ...docs, ...(ctx.lookups ? { lookup: ctx.lookups } : {}) });
    } catch (error) {
      report({ collection: collection.name, rule: kind, error });
      return false;
    }
  }

  return {
    validateRules(collection: Pick<Collection, 'name' | 'fields' | 'rules'>): void {
      const rules: unknown = collection.rules;
      if (typeof rules !== 'object' || rules === null || Array.isArray(rules)) {
        throw new InvalidRequestError('rules must be an object of rule strings.', { field: 'rules' });
      }
      for (const [key, source] of Object.entries(rules)) {
        if (!(RULE_KINDS as readonly string[]).includes(key)) {
          throw new InvalidRequestError(`rules.${key}: unknown operation; rules are read, create, update and delete.`, {
            field: `rules.${key}`,
          });
        }
        if (source === undefined) continue;
        if (typeof source !== 'string') {
          throw new InvalidRequestError(`rules.${key} must be a string.`, { field: `rules.${key}`, rule: key });
        }
        try {
          validateRuleExpr(parseRule(source), key as RuleKind, collection.fields);
        } catch (err) {
          if (!(err instanceof RuleSyntaxError)) throw err;
          throw new InvalidRequestError(`rules.${key}: ${err.message} (at position ${err.position}).`, {
            field: `rules.${key}`,
            rule: key,
            position: err.position,
            reason: err.message,
          });
        }
      }
    },

    readFilter(ctx: AccessContext, collection: Collection): Predicate {
      if (ctx.keyKind === 'secret') return true;
      const expr = compiled(collection, 'read');
      if (expr === null) return false;
      try {
        return residualPredicate(expr, ctx.auth, ctx.now, ctx.lookups);
      } catch (error) {
        report({ collection: collection.name, rule: 'read', error });
        return false;
      }
    },

    canCreate(ctx: AccessContext, collection: Collection, data: RecordDoc): boolean {
      return allows(ctx, collection, 'create', { data });
    },

    canUpdate(ctx: AccessContext, collection: Collection, before: RecordDoc, after: RecordDoc): boolean {
      return allows(ctx, collection, 'update', { record: before, data: after });
    },

    canDelete(ctx: AccessContext, collection: Collection, record: RecordDoc): boolean {
      return allows(ctx, collection, 'delete', { record });
    },
  } satisfies AccessPolicy;
}

export type RulesPolicy = ReturnType<typeof createRulesPolicy>;
