/**
 * Where a query's SELECTs run, stopped by its time budget (`plinth_budget`, checked on every
 * row): on the main connection, that is the event loop, or on a reader thread, admitted by the
 * query lanes (sqlite-query-lanes.ts: bounded queues, fair turns, a heavy lane). Without readers,
 * or for a query pinned to one id, on the event loop. With readers, a query first runs on the
 * event loop for the InlineQueryBudget's slice and, if it has not finished by then, again on a
 * reader; a query of a shape known to be heavy, or with many values, goes to the readers at once.
 */
import type { Statement } from 'better-sqlite3';
import { UnavailableError, type SqliteDatabase } from '@plinth/shared';
import type { QueryClient, RecordQuery } from '../record-store';
import { InlineQueryBudget } from './inline-query-budget';
import { BUDGET_FUNCTION, TIMEOUT_MARK, runQueryJob, type QueryJob, type RawRow } from './sqlite-query-job';
import { isTimeout, type SqliteQueryLanes } from './sqlite-query-lanes';

/**
 * A query with more bound values than this is not run on the event loop, not even one pinned to
 * an id: preparing its SQL there could cost more than a slice (readers prepare on their own thread).
 */
const MAX_INLINE_VALUES = 100;

/** A query pinned to one id (the rule-filtered get): cheap enough for the event loop, unless it has many values. */
export function isPointQuery(query: RecordQuery): boolean {
  const p = query.predicate;
  const first = typeof p === 'object' && p !== null && !Array.isArray(p) && 'and' in p ? p.and[0] : p;
  return Array.isArray(first) && first[0] === 'id' && first[1] === '==';
}

function valueCount(job: QueryJob): number {
  let n = 0;
  for (const run of job.runs) n += run.params.length;
  return n;
}

export class SqliteQueryRunner {
  /** Deadline of the query running on the main connection (plinth_budget reads it). */
  private deadline = Infinity;

  constructor(
    db: SqliteDatabase,
    /** The main connection's statement cache. */
    private readonly prepared: (sql: string) => Statement,
    private readonly lanes: SqliteQueryLanes | null,
    private readonly inline: InlineQueryBudget = new InlineQueryBudget({ sliceMs: 0 }),
  ) {
    db.function(BUDGET_FUNCTION, { deterministic: false, varargs: true }, () => {
      if (Date.now() > this.deadline) throw new Error(TIMEOUT_MARK);
      return 1;
    });
  }

  /**
   * The rows of `job` for `client` of `project`; rejects with the SQL error, one carrying
   * TIMEOUT_MARK past `timeoutMs` (queue time included), or OverloadedError when not admitted.
   */
  async run(project: string, client: QueryClient | undefined, job: QueryJob, timeoutMs: number, point: boolean): Promise<RawRow[]> {
    const lanes = this.lanes;
    const many = valueCount(job) > MAX_INLINE_VALUES;
    if (!lanes || (point && !many)) {
      // Nothing waits here (the query runs now, on this thread), but a client that has gone is not served.
      if (client?.signal?.aborted) throw new UnavailableError('The client went away.');
      return this.runInline(job, timeoutMs);
    }
    if (many || !this.inline.allows() || lanes.isHeavy(job)) return lanes.run(project, client, job, timeoutMs);
    // A slice on the event loop first; a query that needs more runs again on a reader.
    const slice = this.inline.sliceMs;
    if (timeoutMs <= slice) return this.runInline(job, timeoutMs);
    const started = Date.now();
    try {
      return this.runInline(job, slice);
    } catch (err) {
      if (!isTimeout(err)) throw err;
      const spent = Date.now() - started;
      this.inline.overran(spent);
      return lanes.run(project, client, job, timeoutMs - spent);
    }
  }

  /** Runs a query on the main connection, stopped `timeoutMs` after it starts. */
  private runInline(job: QueryJob, timeoutMs: number): RawRow[] {
    this.deadline = Date.now() + timeoutMs;
    try {
      return runQueryJob(this.prepared, job);
    } finally {
      this.deadline = Infinity;
    }
  }

  /** Refuses queries waiting for a reader, and new ones (shutdown); queries on the event loop have no queue. */
  stopAdmission(): void {
    this.lanes?.stopAdmission();
  }

  async close(): Promise<void> {
    await this.lanes?.close();
  }
}
