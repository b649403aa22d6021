/**
 * One keyset query as it runs on a SQLite connection, on the event loop or in a reader thread
 * (sqlite-readers.ts): its SELECTs in order until the page is full, stopping early once the rows
 * hold `maxBytes` of user data. `runQueryJob` is self-contained (no imports, no closures): its
 * source is also the reader threads' code.
 */
import type { SqlValue } from './sqlite-predicate';

/** A row as stored: system columns and the user fields as JSON text. */
export interface RawRow {
  id: string;
  version: number;
  created_at: string;
  updated_at: string;
  data: string;
}

export interface QueryJob {
  /** The SELECTs of one keyset query, in order; each takes the remaining limit as last parameter. */
  runs: Array<{ sql: string; params: SqlValue[] }>;
  limit: number;
  /** Stop after the row at which the rows' `data` reaches this many characters. */
  maxBytes: number;
}

/** What runQueryJob needs of a prepared statement (better-sqlite3's Statement). */
export interface IterableStatement {
  iterate(...params: SqlValue[]): IterableIterator<unknown>;
}

/**
 * The SQL function every query calls once per row it visits, `plinth_budget(id)`: it throws an
 * error carrying this text once the query's deadline has passed, which stops the statement.
 */
export const BUDGET_FUNCTION = 'plinth_budget';
export const TIMEOUT_MARK = 'plinth: query time budget exceeded';

export function runQueryJob(prepare: (sql: string) => IterableStatement, job: QueryJob): RawRow[] {
  const rows: RawRow[] = [];
  let bytes = 0;
  for (const run of job.runs) {
    if (rows.length >= job.limit || bytes >= job.maxBytes) break;
    for (const row of prepare(run.sql).iterate(...run.params, job.limit - rows.length)) {
      const r = row as RawRow;
      rows.push(r);
      bytes += r.data.length;
      if (bytes >= job.maxBytes) break;
    }
  }
  return rows;
}
