/**
 * `contains` and `starts-with` in SQL (docs/records.md "Queries"), ignoring ASCII case as the
 * reference evaluator does (shared/src/predicate/text-match.ts): SQLite's lower() folds ASCII
 * letters only, and so does LIKE. The operand is always a bound parameter: `contains` is
 * `instr(lower(x), lower(?))`, which has no pattern syntax at all; `starts-with` is a LIKE whose
 * `%`, `_` and `\` in the operand are escaped, so user text is never a pattern.
 */
import { fieldExpr, type SqlValue } from './sqlite-sql-fragment';

/** The operand as a LIKE prefix pattern: its wildcards and the escape character escaped. */
export function likePrefix(operand: string): string {
  return `${operand.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * The condition, never NULL: only a string value matches (a json field's value must be of JSON
 * type text; text fields hold strings only).
 */
export function textOperator(field: string, op: 'contains' | 'starts-with', operand: string, json: boolean, params: SqlValue[]): string {
  const x = fieldExpr(field);
  const guard = json ? `json_type(data, '$.${field}') IS 'text'` : `${x} IS NOT NULL`;
  if (op === 'contains') {
    params.push(operand);
    return `(${guard} AND instr(lower(${x}), lower(?)) > 0)`;
  }
  params.push(likePrefix(operand));
  return `(${guard} AND ${x} LIKE ? ESCAPE '\\')`;
}
