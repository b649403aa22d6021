/**
 * Full-text search in a query's SQL (sqlite-search-index.ts holds the index): as a filter, the
 * records whose rowid the FTS5 index matches; ordered by relevance (RANK_ORDER), the index's
 * `rank` (bm25: best first), ties in the order the records were written (rowid), the page
 * starting at its position. The words are one bound parameter (ftsQuery quotes each), never SQL
 * or FTS5 syntax.
 *
 * When nothing but the words filters (no `where`, a read rule that admits every record), the
 * page is taken from the index alone and only its records are read: FTS5 orders by rank without
 * reading the records, so a search costs the index's work plus one page (docs/records.md
 * "Full-text search" has the figures). Otherwise every match is read to apply the conditions.
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
 * The SELECT of a page ordered by relevance over the matching records, `offset` records skipped:
 * `budget` is the time-budget function's name, `predicate` the compiled predicate ('1' when
 * nothing filters). Takes the words first and the limit as last parameter.
 */
export function rankedSelect(table: string, budget: string, predicate: string, offset: number): string {
  const fts = searchTable(table);
  const skip = Number.isSafeInteger(offset) && offset > 0 ? offset : 0;
  if (predicate === '1') {
    return (
      `SELECT t.id AS id, t.version, t.created_at, t.updated_at, t.data FROM ` +
      `(SELECT rowid AS r, rank AS k FROM "${fts}" WHERE "${fts}" MATCH ? AND ${budget}(rowid) ORDER BY rank, rowid LIMIT ? OFFSET ${skip}) AS m ` +
      `JOIN "${table}" AS t ON t.rowid = m.r ORDER BY m.k, m.r`
    );
  }
  return (
    `SELECT "${table}".id AS id, version, created_at, updated_at, data FROM "${fts}" JOIN "${table}" ON "${table}".rowid = "${fts}".rowid ` +
    `WHERE "${fts}" MATCH ? AND ${budget}("${table}".id) AND ${predicate} ORDER BY "${fts}".rank, "${table}".rowid LIMIT ? OFFSET ${skip}`
  );
}

/** The number of records the words match, from the index alone (nothing else filters). */
export function searchCountSource(table: string, budget: string): string {
  const fts = searchTable(table);
  return `"${fts}" WHERE "${fts}" MATCH ? AND ${budget}(rowid)`;
}
