/**
 * Full-text search in a query's SQL (sqlite-search-index.ts holds the index): as a filter, the
 * records whose rowid the FTS5 index matches; ordered by relevance (RANK_ORDER), a join with the
 * index ordered by its `rank` (bm25: best first), ties by id, the page starting at its position.
 * The words are one bound parameter (ftsQuery quotes each), never SQL or FTS5 syntax.
 */
import type { SqlValue } from './sqlite-predicate';
import { ftsQuery, searchTable } from './sqlite-search-index';

/** `rowid IN (the matches)`, or nothing without a search. */
export function searchFilter(table: string, words: readonly string[] | undefined): { sql: string; params: SqlValue[] } {
  if (!words) return { sql: '1', params: [] };
  const fts = searchTable(table);
  return { sql: `"${table}".rowid IN (SELECT rowid FROM "${fts}" WHERE "${fts}" MATCH ?)`, params: [ftsQuery(words)] };
}

/**
 * The SELECT of a page ordered by relevance: `conditions` (the time-budget call and the compiled
 * predicate) over the matching records, `offset` records skipped. Takes the limit as last parameter.
 */
export function rankedSelect(table: string, conditions: string, offset: number): string {
  const fts = searchTable(table);
  const skip = Number.isSafeInteger(offset) && offset > 0 ? offset : 0;
  return (
    `SELECT "${table}".id AS id, version, created_at, updated_at, data FROM "${fts}" JOIN "${table}" ON "${table}".rowid = "${fts}".rowid ` +
    `WHERE "${fts}" MATCH ? AND ${conditions} ORDER BY "${fts}".rank, "${table}".id LIMIT ? OFFSET ${skip}`
  );
}
