/**
 * What the SQLite record store makes of a query's errors: past its time budget, 503
 * `query_timeout`; its table dropped by a concurrent collection delete, 404; a row whose JSON
 * the SQL JSON functions cannot read (sqlite-query-sql.ts), the same query again in its tolerant form.
 */
import { NotFoundError, type Collection } from '@plinth/shared';
import { queryTimeout } from '../query-timeout';
import { TIMEOUT_MARK, type QueryJob, type RawRow } from './sqlite-query-job';

export const MALFORMED_JSON = /malformed JSON/;
const NO_SUCH_TABLE = /no such table/;

/**
 * The message of a thrown error. Not `instanceof Error`: better-sqlite3 builds its errors from
 * the class of the first JavaScript realm that loaded it, which under test runners is not ours.
 */
export function messageOf(err: unknown): string {
  const message = typeof err === 'object' && err !== null ? (err as { message?: unknown }).message : undefined;
  return typeof message === 'string' ? message : '';
}

/** A collection's table dropped by a concurrent delete: 404 for that collection; other errors as they are. */
export function tableGone(collection: Collection, err: unknown): unknown {
  return NO_SUCH_TABLE.test(messageOf(err)) ? new NotFoundError(`Collection "${collection.name}" does not exist.`) : err;
}

/**
 * The rows of `job` as `run` answers them, its errors translated; a job that met an unreadable
 * row runs again in its tolerant form. `budgetMs` is the query's time budget, for the 503.
 */
export async function runTolerant(
  run: (job: QueryJob) => Promise<RawRow[]>,
  collection: Collection,
  budgetMs: number | undefined,
  job: (tolerant: boolean) => QueryJob,
): Promise<RawRow[]> {
  try {
    return await run(job(false));
  } catch (err) {
    const message = messageOf(err);
    if (message.includes(TIMEOUT_MARK)) throw queryTimeout(budgetMs ?? 0);
    if (NO_SUCH_TABLE.test(message)) throw tableGone(collection, err);
    if (!MALFORMED_JSON.test(message)) throw err;
    try {
      return await run(job(true));
    } catch (again) {
      if (messageOf(again).includes(TIMEOUT_MARK)) throw queryTimeout(budgetMs ?? 0);
      throw again;
    }
  }
}
