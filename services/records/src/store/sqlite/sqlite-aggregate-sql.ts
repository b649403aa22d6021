/**
 * The SQL of an aggregate on a collection table: one SELECT over the same compiled predicate as
 * a list, calling the time-budget function on every row it visits. Its single row has the shape
 * of a record row (sqlite-query-job.ts) with the results as a JSON object in `data`, so it runs
 * through the same query runner, readers and admission as a page of records.
 *
 * A count alone reads only `id` and the predicate's fields: on indexed fields SQLite answers it
 * from a covering index without reading the records' bodies (see the EXPLAIN QUERY PLAN test).
 * Sums and means take only JSON numbers (a value stored before a type change is skipped, as
 * MongoDB's $sum and $avg skip non-numbers); TOTAL is 0.0 over nothing, AVG is NULL.
 */
import type { Collection } from '@plinth/shared';
import type { AggregateQuery, AggregateResult } from '../record-store';
import { compilePredicate, type SqlValue } from './sqlite-predicate';
import { BUDGET_FUNCTION, type RawRow } from './sqlite-query-job';
import { searchCountSource, searchFilter } from './sqlite-search-sql';
import { ftsQuery } from './sqlite-search-index';

/** The stored value of `field` when it is a JSON number, else NULL. */
function numeric(field: string, data: string): string {
  return `CASE WHEN json_type(${data}, '$.${field}') IN ('integer', 'real') THEN json_extract(${data}, '$.${field}') END`;
}

/** `tolerant`: a row the JSON functions cannot parse counts, with no numbers (as in sqlite-query-sql.ts). */
export function aggregateSql(table: string, collection: Collection, query: AggregateQuery, tolerant = false): { sql: string; params: SqlValue[] } {
  const where = compilePredicate(query.predicate, collection);
  const data = tolerant ? `iif(json_valid(data), data, '{}')` : 'data';
  // Field names come from the collection's allowlist (validated identifiers), so they are inlined
  // as JSON keys; s<i> and a<i> keep the object's keys apart from any field name.
  const results = [
    `'count', COUNT(*)`,
    ...query.sum.map((f, i) => `'s${i}', TOTAL(${numeric(f, data)})`),
    ...query.avg.map((f, i) => `'a${i}', AVG(${numeric(f, data)})`),
  ].join(', ');
  const whereSql = tolerant ? where.sql.replaceAll("(data, '$.", `(${data}, '$.`) : where.sql;
  if (query.search && where.sql === '1' && query.sum.length === 0 && query.avg.length === 0) {
    // A count of what the words match, nothing else filtering: the index alone answers it.
    const sql = `SELECT '' AS id, 0 AS version, '' AS created_at, '' AS updated_at, json_object(${results}) AS data FROM ${searchCountSource(table, BUDGET_FUNCTION)} LIMIT ?`;
    return { sql, params: [ftsQuery(query.search)] };
  }
  const search = searchFilter(table, query.search);
  const sql =
    `SELECT '' AS id, 0 AS version, '' AS created_at, '' AS updated_at, json_object(${results}) AS data ` +
    `FROM "${table}" WHERE ${BUDGET_FUNCTION}(id) AND ${search.sql} AND ${whereSql} LIMIT ?`;
  return { sql, params: [...search.params, ...where.params] };
}

/** The results carried by the aggregate's row, by field name. */
export function aggregateResult(query: AggregateQuery, row: RawRow | undefined): AggregateResult {
  const raw = row ? (JSON.parse(row.data) as { [key: string]: number | null }) : {};
  const result: AggregateResult = { count: raw.count ?? 0, sum: {}, avg: {} };
  query.sum.forEach((f, i) => (result.sum[f] = raw[`s${i}`] ?? 0));
  query.avg.forEach((f, i) => (result.avg[f] = raw[`a${i}`] ?? null));
  return result;
}
