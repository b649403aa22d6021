/**
 * The expression indexes of a collection table on SQLite (docs/records.md "Storage"): for each
 * `indexed` or `unique` field, `(field, id)` and `(field, created_at, id)`, and a unique index
 * for `unique`, on the same `json_extract` expression the query compiler emits.
 */
import type { Collection } from '@plinth/shared';
import { fieldExpr } from './sqlite-predicate';

const hex = (field: string): string => Buffer.from(field, 'utf8').toString('hex');

/** Index DDL wanted for a collection, by index name. */
export function wantedIndexes(table: string, collection: Collection): Map<string, string> {
  const wanted = new Map<string, string>();
  for (const [field, def] of Object.entries(collection.fields)) {
    if (!def.indexed && !def.unique) continue;
    const ix = `ix:${table}:${hex(field)}`;
    wanted.set(ix, `CREATE INDEX "${ix}" ON "${table}" (${fieldExpr(field)}, id)`);
    // Serves `field == x` in the default order (created_at) without a sort.
    const ic = `ic:${table}:${hex(field)}`;
    wanted.set(ic, `CREATE INDEX "${ic}" ON "${table}" (${fieldExpr(field)}, created_at, id)`);
    if (def.unique) {
      const ux = `ux:${table}:${hex(field)}`;
      wanted.set(ux, `CREATE UNIQUE INDEX "${ux}" ON "${table}" (${fieldExpr(field)})`);
    }
  }
  return wanted;
}
