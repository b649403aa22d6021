/**
 * Where a query's SELECTs run, stopped by its time budget (`plinth_budget`, checked on every
 * row): on the main connection, that is the event loop, or on a reader thread
 * (sqlite-readers.ts). Without readers, or for a query pinned to one id, on the event loop.
 * With readers, a query first runs on the event loop for the InlineQueryBudget's slice and, if
 * it has not finished by then, again on a reader.
 */
import type { Statement } from 'better-sqlite3';
import type { SqliteDatabase } from '@plinth/shared';
import type { RecordQuery } from '../record-store';
import { InlineQueryBudget } from './inline-query-budget';
import { BUDGET_FUNCTION, TIMEOUT_MARK, runQueryJob, type QueryJob, type RawRow } from './sqlite-query-job';
import type { SqliteReaders } from './sqlite-readers';

/** A query pinned to one id (the rule-filtered get): cheap enough for the event loop. */
export function isPointQuery(query: RecordQuery): boolean {
  const p = query.predicate;
  const first = typeof p === 'object' && p !== null && !Array.isArray(p) && 'and' in p ? p.and[0] : p;
  return Array.isArray(first) && first[0] === 'id' && first[1] === '==';
}

function isTimeout(err: unknown): boolean {
  const message = typeof err === 'object' && err !== null ? (err as { message?: unknown }).message : undefined;
  return typeof message === 'string' && message.includes(TIMEOUT_MARK);
}

export class SqliteQueryRunner {
  /** Deadline of the query running on the main connection (plinth_budget reads it). */
  private deadline = Infinity;

  constructor(
    db: SqliteDatabase,
    /** The main connection's statement cache. */
    private readonly prepared: (sql: string) => Statement,
    private readonly readers: SqliteReaders | null,
    private readonly inline: InlineQueryBudget = new InlineQueryBudget({ sliceMs: 0 }),
  ) {
    db.function(BUDGET_FUNCTION, { deterministic: false, varargs: true }, () => {
      if (Date.now() > this.deadline) throw new Error(TIMEOUT_MARK);
      return 1;
    });
  }

  /** The rows of `job`; rejects with the SQL error, or one carrying TIMEOUT_MARK past `timeoutMs`. */
  async run(job: QueryJob, timeoutMs: number, point: boolean): Promise<RawRow[]> {
    const readers = this.readers;
    if (!readers || point) return this.runInline(job, timeoutMs);
    if (!this.inline.allows()) return readers.run(job, timeoutMs);
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
      return readers.run(job, timeoutMs - spent);
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

  async close(): Promise<void> {
    await this.readers?.close();
  }
}
