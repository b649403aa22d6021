/**
 * Reader threads for the SQLite record store: queries run on worker threads, each with its own
 * read-only connection to the same WAL database, so a slow query delays only itself and never
 * the event loop (health checks, other projects' requests). Writes stay on the main connection;
 * WAL lets readers see every committed write without blocking it.
 */
import { Worker } from 'node:worker_threads';
import { BUDGET_FUNCTION, TIMEOUT_MARK, runQueryJob, type QueryJob, type RawRow } from './sqlite-query-job';

/** A job as sent to a reader thread. */
interface Envelope extends QueryJob {
  id: number;
  /** The query stops (plinth_budget throws) this long after the reader starts it. */
  timeoutMs: number;
}

type Reply = { id: number; rows: RawRow[] } | { id: number; error: string };

interface Pending {
  job: Envelope;
  resolve: (rows: RawRow[]) => void;
  reject: (err: Error) => void;
  watchdog?: NodeJS.Timeout;
}

interface Reader {
  worker: Worker;
  current: Pending | null;
}

/**
 * The reader thread's main function. Its source is evaluated in the worker, so it uses nothing
 * from this module: the query runner comes as an argument, the rest through workerData.
 */
function readerMain(run: typeof runQueryJob): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { parentPort, workerData } = require('node:worker_threads') as typeof import('node:worker_threads');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const Database = require(workerData.driver) as typeof import('better-sqlite3');
  if (workerData.nice) {
    // Linux schedules each thread on its own: this one yields the cores to the event loops and
    // to the other readers whenever they want them (elsewhere the call fails and changes nothing).
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const tid = Number(String(require('node:fs').readlinkSync('/proc/thread-self')).split('/').pop());
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      if (tid > 0) require('node:os').setPriority(tid, workerData.nice);
    } catch {
      // No per-thread priority here: the lanes' own limits still apply.
    }
  }
  const db = new Database(workerData.file, { fileMustExist: true });
  db.pragma('query_only = ON');
  db.pragma('busy_timeout = 5000');
  let deadline = Infinity;
  db.function(workerData.budgetFunction, { deterministic: false, varargs: true }, () => {
    if (Date.now() > deadline) throw new Error(workerData.timeoutMark);
    return 1;
  });
  const statements = new Map<string, ReturnType<typeof db.prepare>>();
  const prepare = (sql: string) => {
    let stmt = statements.get(sql);
    if (!stmt) {
      if (statements.size >= 500) statements.delete(statements.keys().next().value as string);
      stmt = db.prepare(sql);
      statements.set(sql, stmt);
    }
    return stmt;
  };
  parentPort!.on('message', (job: Envelope) => {
    // The budget counts the query's own running time, not the wait for a free (or new) thread.
    deadline = Date.now() + job.timeoutMs;
    try {
      parentPort!.postMessage({ id: job.id, rows: run(prepare, job) });
    } catch (err) {
      parentPort!.postMessage({ id: job.id, error: err instanceof Error ? err.message : String(err) });
    }
  });
}

const SOURCE = `"use strict";\n(${readerMain.toString()})(${runQueryJob.toString()});\n`;

/**
 * Extra time the main thread waits past a query's budget before it gives up on a stuck reader
 * (also covers starting a new reader thread on a busy machine).
 */
const WATCHDOG_GRACE_MS = 5000;

export class SqliteReaders {
  private readonly readers: Reader[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly file: string,
    private readonly size: number,
    /** A nice value for the threads (Linux): 10 lets any other thread of the machine go first. */
    private readonly nice = 0,
  ) {}

  /**
   * Runs `job` on a free reader thread (queued while all are busy), stopped `timeoutMs` after it
   * starts there. Rejects with the SQL error.
   */
  run(job: QueryJob, timeoutMs: number): Promise<RawRow[]> {
    if (this.closed) return Promise.reject(new Error('the record store is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ job: { ...job, id: this.nextId++, timeoutMs }, resolve, reject });
      this.dispatch();
    });
  }

  private spawn(): Reader {
    const worker = new Worker(SOURCE, {
      eval: true,
      // A reader only turns rows into messages: a small young generation keeps its heap (and
      // the process's resident memory) small without slowing it.
      resourceLimits: { maxYoungGenerationSizeMb: 4 },
      workerData: { file: this.file, driver: require.resolve('better-sqlite3'), budgetFunction: BUDGET_FUNCTION, timeoutMark: TIMEOUT_MARK, nice: this.nice },
    });
    // Idle readers never keep the process alive; close() ends them.
    worker.unref();
    const reader: Reader = { worker, current: null };
    worker.on('message', (reply: Reply) => this.settle(reader, reply));
    const fail = (err: Error): void => {
      this.remove(reader);
      const pending = reader.current;
      reader.current = null;
      if (pending) {
        clearTimeout(pending.watchdog);
        pending.reject(err);
      }
      this.dispatch();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`SQLite reader thread exited (${code})`)));
    this.readers.push(reader);
    return reader;
  }

  private remove(reader: Reader): void {
    const i = this.readers.indexOf(reader);
    if (i >= 0) this.readers.splice(i, 1);
  }

  private dispatch(): void {
    while (this.queue.length > 0 && !this.closed) {
      const reader = this.readers.find((r) => r.current === null) ?? (this.readers.length < this.size ? this.spawn() : null);
      if (!reader) return;
      const pending = this.queue.shift() as Pending;
      reader.current = pending;
      // A query that never reaches plinth_budget again (one huge step) is abandoned: its thread
      // is replaced so later queries are not stuck behind it.
      const wait = pending.job.timeoutMs + WATCHDOG_GRACE_MS;
      if (Number.isFinite(wait)) {
        pending.watchdog = setTimeout(() => {
          if (reader.current !== pending) return;
          reader.current = null;
          this.remove(reader);
          void reader.worker.terminate();
          pending.reject(new Error(TIMEOUT_MARK));
          this.dispatch();
        }, Math.max(0, wait));
      }
      reader.worker.postMessage(pending.job);
    }
  }

  private settle(reader: Reader, reply: Reply): void {
    const pending = reader.current;
    if (!pending || pending.job.id !== reply.id) return;
    reader.current = null;
    clearTimeout(pending.watchdog);
    if ('error' in reply) pending.reject(new Error(reply.error));
    else pending.resolve(reply.rows);
    this.dispatch();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.queue.splice(0)) p.reject(new Error('the record store is closed'));
    const readers = this.readers.splice(0);
    await Promise.all(readers.map((r) => r.worker.terminate()));
  }
}
