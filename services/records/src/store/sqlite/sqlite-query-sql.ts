/**
 * The SQL of one keyset query on a collection table: one SELECT per run of the order (values
 * after the cursor, then the missing values), each calling the time-budget function first. The
 * tolerant form reads a row the JSON functions cannot parse as `{}` instead of failing.
 */
import type { Collection } from '@plinth/shared';
import { RANK_ORDER, type RecordQuery } from '../record-store';
import { rankedSelect, searchFilter } from './sqlite-search-sql';
import { fieldTypeOf, isSystemField, type Scalar } from '../record-shape';
import { bindValue, compilePredicate, fieldExpr, type SqlValue } from './sqlite-predicate';
import { BUDGET_FUNCTION } from './sqlite-query-job';

/** One seekable run of a keyset query: its condition and the order within it. */
interface KeysetRun {
  sql: string;
  params: SqlValue[];
  order: string;
}

/**
 * A row whose JSON the SQL JSON functions cannot read (nested over SQLite's 1000 levels, written
 * before values had a depth limit) reads as an empty object in the tolerant form of a query.
 */
const TOLERANT_DATA = `iif(json_valid(data), data, '{}')`;

/**
 * The keyset position as conditions SQLite can seek with, one per run of the order: values
 * after the cursor, and the missing values (first ascending, last descending) as their own
 * run ordered by id. queryRecords runs them in order until the page is full.
 */
export function keysetRuns(collection: Collection, query: RecordQuery): KeysetRun[] {
  const { after, orderBy, direction } = query;
  const dir = direction === 'asc' ? 'ASC' : 'DESC';
  const x = fieldExpr(orderBy);
  const byField = orderBy === 'id' ? `id ${dir}` : `${x} ${dir}, id ${dir}`;
  if (!after) return [{ sql: '1', params: [], order: byField }];
  const cmp = direction === 'asc' ? '>' : '<';
  if (orderBy === 'id') return [{ sql: `id ${cmp} ?`, params: [after.id], order: byField }];
  // Within the missing values the order is by id alone, which the (field, id) index serves.
  const nulls: KeysetRun = { sql: `${x} IS NULL`, params: [], order: `id ${dir}` };
  if (after.value === null) {
    const sameNull: KeysetRun = { sql: `${x} IS NULL AND id ${cmp} ?`, params: [after.id], order: `id ${dir}` };
    // "Has a value" as a range from the type's lowest value, so SQLite seeks past the nulls.
    const type = fieldTypeOf(collection, orderBy);
    const lowest = type === 'text' || type === 'timestamp' ? `''` : '-9e999';
    return direction === 'asc' ? [sameNull, { sql: `${x} >= ${lowest}`, params: [], order: byField }] : [sameNull];
  }
  const v = bindValue(after.value as Scalar);
  // A plain range term plus a row value: SQLite seeks the (field, id) index to the cursor.
  const beyond: KeysetRun = { sql: `${x} ${cmp}= ? AND (${x}, id) ${cmp} (?, ?)`, params: [v, v, after.id], order: byField };
  return direction === 'desc' && !isSystemField(orderBy) ? [beyond, nulls] : [beyond];
}

/** The SELECTs a query runs on `table`, in order; each takes the remaining limit as last parameter. */
export function querySql(table: string, collection: Collection, query: RecordQuery, tolerant = false): Array<{ sql: string; params: SqlValue[] }> {
  const where = compilePredicate(query.predicate, collection);
  // Field names are validated identifiers and values are bound: this rewrite only touches
  // the JSON functions' first argument.
  const tolerate = (sql: string): string => (tolerant ? sql.replaceAll("(data, '$.", `(${TOLERANT_DATA}, '$.`) : sql);
  if (query.search && query.orderBy === RANK_ORDER) {
    const offset = typeof query.after?.value === 'number' ? query.after.value : 0;
    const sql = rankedSelect(table, BUDGET_FUNCTION, where.sql, offset);
    return [{ sql: tolerate(sql), params: [...searchFilter(table, query.search).params, ...where.params] }];
  }
  const search = searchFilter(table, query.search);
  return keysetRuns(collection, query).map((run) => {
    const sql = `SELECT id, version, created_at, updated_at, data FROM "${table}" WHERE ${BUDGET_FUNCTION}(id) AND ${search.sql} AND ${where.sql} AND ${run.sql} ORDER BY ${run.order} LIMIT ?`;
    return { sql: tolerate(sql), params: [...search.params, ...where.params, ...run.params] };
  });
}
