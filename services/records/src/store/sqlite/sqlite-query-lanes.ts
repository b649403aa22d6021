/**
 * Admission of the queries that run on reader threads (sqlite-readers.ts), so that no caller's
 * queries can take the readers from everyone else's:
 *
 * - Every query first goes to the **light lane**: its own reader threads, where it may run for at
 *   most LIGHT_SLICE_MS. Nearly every query (an index search returning a page) ends there.
 * - A query still running at the end of its slice is stopped and goes to the **heavy lane**, with
 *   what is left of its time budget; its shape is remembered as heavy (query-shape-costs.ts), so
 *   the next queries of that shape go to the heavy lane at once. The heavy lane has threads of its
 *   own, of which one project may hold at most half and one caller a quarter (at least one each).
 *
 * Both lanes are AdmissionQueues: bounded queues served in fair turns, project by project and,
 * within a project, caller by caller (a user, an anonymous address, the secret key). A query
 * that cannot be queued, or that would wait past the queue's bound or past its own time budget
 * (the wait counts against it), is refused at once with 503 `overloaded` and Retry-After; a
 * waiting query whose client has gone is dropped before it starts. A free slot starts a query
 * at once, in the same turn of the event loop.
 */
import { AdmissionQueue, type AdmissionTicket } from '@plinth/shared';
import type { QueryClient } from '../record-store';
import { QueryShapeCosts } from './query-shape-costs';
import { TIMEOUT_MARK, type QueryJob, type RawRow } from './sqlite-query-job';
import { SqliteReaders } from './sqlite-readers';

/**
 * How long a query may run on the light lane before it counts as heavy (ms), and a heavy-lane run
 * under half of it makes its shape light again. Wall-clock time: on cores shared with heavy
 * queries a cheap query runs slower, and one that overruns is marked heavy like them (a longer
 * slice measured worse: a 44–70 ms query then counted as light and held the light lane's turns).
 */
export const LIGHT_SLICE_MS = 50;

export interface QueryAdmissionOptions {
  /** Queries waiting at once in each lane (default 100; half for one caller, two turns of its own on the heavy lane). */
  maxQueued?: number;
  /** Longest wait for a reader, in ms (default 1000); never past the query's own budget. */
  maxWaitMs?: number;
}

const ANONYMOUS: QueryClient = { id: 'anonymous' };
/** The light lane's answer for a query that must continue on the heavy lane. */
const MOVED = Symbol('moved');

export function isTimeout(err: unknown): boolean {
  const message = typeof err === 'object' && err !== null ? (err as { message?: unknown }).message : undefined;
  return typeof message === 'string' && message.includes(TIMEOUT_MARK);
}

/** The shape of a query: its SQL, values apart (the statement caches are keyed the same way). */
function shapeOf(job: QueryJob): string {
  return job.runs.length === 1 ? job.runs[0]!.sql : job.runs.map((r) => r.sql).join('\n');
}

/** The nice value of the heavy lane's reader threads (Linux; 0 is the default, 19 the lowest). */
const HEAVY_NICE = 10;

export class SqliteQueryLanes {
  readonly costs = new QueryShapeCosts();
  private readonly light: AdmissionQueue;
  private readonly heavy: AdmissionQueue;
  private readonly lightReaders: SqliteReaders;
  private readonly heavyReaders: SqliteReaders;

  constructor(file: string, readers: number, opts: QueryAdmissionOptions = {}) {
    const maxQueued = opts.maxQueued ?? 100;
    const maxWaitMs = opts.maxWaitMs ?? 1000;
    this.lightReaders = new SqliteReaders(file, readers);
    // Heavy queries run at a lower priority (nice 10): a cheap query's thread or an event loop
    // never waits for a core behind them.
    this.heavyReaders = new SqliteReaders(file, readers, HEAVY_NICE);
    this.light = new AdmissionQueue({
      name: 'queries',
      concurrency: readers,
      maxQueued,
      // Half: a server on the secret key with dozens of queries in flight is one caller.
      maxQueuedPerCaller: Math.max(1, Math.floor(maxQueued / 2)),
      maxWaitMs,
    });
    const perProject = Math.max(1, Math.ceil(readers / 2));
    const perCaller = Math.max(1, Math.ceil(perProject / 2));
    this.heavy = new AdmissionQueue({
      name: 'heavy queries',
      concurrency: readers,
      maxQueued,
      // A caller's heavy queries wait at most two turns of their own: the excess is refused at
      // once instead of after waiting the whole bound.
      maxQueuedPerCaller: Math.min(maxQueued, 2 * perCaller),
      maxWaitMs,
      maxRunningPerProject: perProject,
      maxRunningPerCaller: perCaller,
    });
  }

  /** Whether queries of this shape go straight to the heavy lane. */
  isHeavy(job: QueryJob): boolean {
    return this.costs.isHeavy(shapeOf(job));
  }

  /**
   * The rows of `job`, run on a reader within `timeoutMs` counted from now, queue time included.
   * Rejects with OverloadedError when not admitted, with the SQL error, or with one carrying
   * TIMEOUT_MARK when the budget ran out while it ran.
   */
  async run(project: string, client: QueryClient | undefined, job: QueryJob, timeoutMs: number): Promise<RawRow[]> {
    const shape = shapeOf(job);
    const started = Date.now();
    const who = client ?? ANONYMOUS;
    if (!this.costs.isHeavy(shape)) {
      const rows = await this.light.run(ticket(project, who, timeoutMs), async ({ waitedMs }) => {
        // Others of this shape may have found it heavy while this one waited.
        if (this.costs.isHeavy(shape)) return MOVED;
        const left = timeoutMs - waitedMs;
        const slice = Math.min(left, LIGHT_SLICE_MS);
        try {
          return await this.lightReaders.run(job, slice);
        } catch (err) {
          if (!isTimeout(err) || slice >= left) throw err;
          this.costs.markHeavy(shape);
          return MOVED;
        }
      });
      if (rows !== MOVED) return rows;
    }
    const left = timeoutMs - (Date.now() - started);
    if (left <= 0) throw new Error(TIMEOUT_MARK);
    return this.heavy.run(ticket(project, who, left), async ({ waitedMs }) => {
      const begun = Date.now();
      const rows = await this.heavyReaders.run(job, left - waitedMs);
      if (Date.now() - begun < LIGHT_SLICE_MS / 2) this.costs.markLight(shape);
      return rows;
    });
  }

  /** Refuses every query waiting for a reader, and every new one (shutdown). */
  stopAdmission(): void {
    this.light.close();
    this.heavy.close();
  }

  async close(): Promise<void> {
    this.light.close();
    this.heavy.close();
    await Promise.all([this.lightReaders.close(), this.heavyReaders.close()]);
  }
}

function ticket(project: string, client: QueryClient, maxWaitMs: number): AdmissionTicket {
  return { project, caller: client.id, signal: client.signal, maxWaitMs };
}
