/**
 * Failure injection and sessions for the mingo stand-in (mingo-db.ts): a test can make the N-th
 * call of one operation throw (a plain error, or a transient one labelled as the server labels a
 * write conflict or a failover), or hold a call until the test releases it, to force an
 * interleaving. Sessions give `withTransaction` all-or-nothing semantics.
 *
 * Test-only.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { MongoServerError, MongoWriteConcernError, type Db, type TransactionOptions } from 'mongodb';

/** Operations that can be failed or held; `commitTransaction` is the commit of withTransaction. */
export type FaultOp =
  | 'insertOne'
  | 'insertMany'
  | 'updateOne'
  | 'updateMany'
  | 'findOneAndUpdate'
  | 'findOneAndDelete'
  | 'deleteOne'
  | 'deleteMany'
  | 'createIndex'
  | 'dropIndex'
  | 'drop'
  | 'find'
  | 'listIndexes'
  | 'commitTransaction';

export interface FaultSpec {
  op: FaultOp;
  /** Only calls on this collection count (any collection when absent). */
  collection?: string;
  /** The matching call that fails, counting from 1 from the moment of injection (default 1). */
  nth?: number;
  /**
   * What is thrown: `transient` is a WriteConflict labelled TransientTransactionError (what a
   * transaction meets on a conflict or a primary step-down; withTransaction retries it);
   * `network` is a failover error labelled RetryableWriteError; `slow` is an operation that
   * takes longer than any time limit: one with maxTimeMS fails with MaxTimeMSExpired (code 50),
   * one without throws (it would run as long as the server takes); default a plain Error.
   */
  error?: 'transient' | 'network' | 'slow' | Error;
}

interface ArmedFault extends FaultSpec {
  seen: number;
}

interface Hold {
  op: FaultOp;
  collection?: string;
  /** Matching calls still to let through before the held one. */
  skip: number;
  reached: () => void;
  released: Promise<void>;
}

/** A transient error as the server reports it inside a transaction. */
export function transientError(): MongoServerError {
  const err = new MongoServerError({ message: 'WriteConflict (injected by mingo-db)', code: 112, codeName: 'WriteConflict' });
  err.addErrorLabel('TransientTransactionError');
  return err;
}

function networkError(): MongoServerError {
  const err = new MongoServerError({ message: 'not primary (injected by mingo-db)', code: 10107, codeName: 'NotWritablePrimary' });
  err.addErrorLabel('RetryableWriteError');
  err.addErrorLabel('TransientTransactionError');
  return err;
}

function timeLimitError(): MongoServerError {
  return new MongoServerError({ message: 'operation exceeded time limit (injected by mingo-db)', code: 50, codeName: 'MaxTimeMSExpired' });
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** How long the driver's withTransaction keeps retrying a commit whose result is unknown. */
const DRIVER_COMMIT_RETRY_MS = 120_000;

type WriteConcernResult = ConstructorParameters<typeof MongoWriteConcernError>[0];

/**
 * A commit whose write concern was not satisfied, as the server answers it: with
 * maxCommitTimeMS, MaxTimeMSExpired once that time has passed (the driver does not retry it);
 * without, WriteConcernFailed after wtimeoutMS, labelled UnknownTransactionCommitResult (the
 * driver retries the commit). https://www.mongodb.com/docs/manual/reference/method/Session.commitTransaction/
 */
async function unacknowledgedCommit(options: TransactionOptions | undefined): Promise<MongoServerError> {
  const maxCommitTimeMS = options?.maxCommitTimeMS;
  if (maxCommitTimeMS !== undefined) {
    await sleep(maxCommitTimeMS);
    const err = new MongoWriteConcernError({ writeConcernError: { code: 50, codeName: 'MaxTimeMSExpired', errmsg: 'operation exceeded time limit (injected by mingo-db)' }, ok: 1 } as WriteConcernResult);
    err.addErrorLabel('UnknownTransactionCommitResult');
    return err;
  }
  const wc = options?.writeConcern as { wtimeoutMS?: number; wtimeout?: number } | undefined;
  await sleep(wc?.wtimeoutMS ?? wc?.wtimeout ?? 10_000);
  const err = new MongoWriteConcernError({ writeConcernError: { code: 64, codeName: 'WriteConcernFailed', errmsg: 'waiting for replication timed out (injected by mingo-db)', errInfo: { wtimeout: true } }, ok: 1 } as WriteConcernResult);
  err.addErrorLabel('UnknownTransactionCommitResult');
  return err;
}

/** Undo entries recorded by writes made with a session inside a transaction. */
export type Undo = () => void;

/** The session object handed to adapters through `db.client.startSession()`. */
export class FakeSession {
  /** Set while the callback of withTransaction runs; writes with this session push undo entries. */
  undo: Undo[] | null = null;
  private ended: Promise<void> = Promise.resolve();
  private endAttempt: () => void = () => {};
  constructor(private readonly control: MingoControl) {}

  /** Resolves when the current transaction attempt commits (locally) or is rolled back. */
  attemptEnded(): Promise<void> {
    return this.ended;
  }

  private beginAttempt(): void {
    this.undo = [];
    this.ended = new Promise<void>((resolve) => (this.endAttempt = resolve));
  }

  inTransaction(): boolean {
    return this.undo !== null;
  }

  /**
   * Runs `fn` as one transaction: all its writes with this session apply, or none do. Like the
   * driver, retries the whole callback on errors labelled TransientTransactionError. The
   * stand-in runs transactions one at a time (the server would make the loser of a write
   * conflict retry, which ends the same way). A commit stalled by `stallCommits` is applied on
   * the "primary" but never acknowledged: it fails as the server and the driver make it fail
   * (unacknowledgedCommit), its writes kept whole.
   */
  async withTransaction<T>(fn: (session: FakeSession) => Promise<T>, options?: TransactionOptions): Promise<T> {
    const started = Date.now();
    const release = await this.control.lock();
    let result: T;
    try {
      for (let attempt = 1; ; attempt++) {
        this.beginAttempt();
        try {
          result = await this.control.transactionScope.run(this, () => fn(this));
          this.control.beforeOp('commitTransaction', undefined);
          this.undo = null;
          this.endAttempt();
          break;
        } catch (err) {
          const undo = this.undo ?? [];
          this.undo = null;
          for (const u of undo.reverse()) u();
          this.endAttempt();
          const transient = err instanceof MongoServerError && err.hasErrorLabel('TransientTransactionError');
          if (!transient || attempt >= 20) throw err;
        }
      }
    } finally {
      release();
    }
    // Like the driver: a commit with an unknown result is retried, unless it hit maxCommitTimeMS.
    while (this.control.takeCommitStall()) {
      const err = await unacknowledgedCommit(options);
      if (err.code === 50 || Date.now() - started >= DRIVER_COMMIT_RETRY_MS) throw err;
    }
    return result;
  }

  async endSession(): Promise<void> {}
}

/** Per-database state of the stand-in: armed faults, holds, the transaction lock. */
export class MingoControl {
  private faults: ArmedFault[] = [];
  private holds: Hold[] = [];
  private stalledCommits = 0;
  private tail: Promise<void> = Promise.resolve();
  readonly transactionScope = new AsyncLocalStorage<FakeSession>();
  /** Calls of each op so far, for tests that assert how often the adapter wrote. */
  readonly calls = new Map<string, number>();

  async lock(): Promise<() => void> {
    let release!: () => void;
    const next = new Promise<void>((r) => (release = r));
    const previous = this.tail;
    this.tail = previous.then(() => next);
    await previous;
    return release;
  }

  stallCommits(count: number): void {
    this.stalledCommits = count;
  }

  /** True (and one stall used) when the next commit is not to be acknowledged. */
  takeCommitStall(): boolean {
    if (this.stalledCommits <= 0) return false;
    this.stalledCommits--;
    return true;
  }

  inject(spec: FaultSpec): void {
    this.faults.push({ ...spec, seen: 0 });
  }

  hold(op: FaultOp, collection?: string, nth = 1): { reached: Promise<void>; release: () => void } {
    let reached!: () => void;
    let release!: () => void;
    const reachedP = new Promise<void>((r) => (reached = r));
    const released = new Promise<void>((r) => (release = r));
    this.holds.push({ op, collection, skip: nth - 1, reached, released });
    return { reached: reachedP, release };
  }

  /** Called by every fake operation before it acts: counts, throws armed faults, checks sessions. */
  beforeOp(op: FaultOp, collection: string | undefined, session?: unknown, maxTimeMS?: number): void {
    for (const key of collection ? [op, `${op}:${collection}`] : [op]) this.calls.set(key, (this.calls.get(key) ?? 0) + 1);
    const inside = this.transactionScope.getStore();
    if (inside && op !== 'commitTransaction' && session !== inside) {
      throw new Error(`mingo-db: ${op} on ${collection} inside withTransaction without the transaction's session`);
    }
    for (const f of this.faults) {
      if (f.op !== op || (f.collection !== undefined && f.collection !== collection)) continue;
      f.seen++;
      if (f.seen !== (f.nth ?? 1)) continue;
      this.faults = this.faults.filter((x) => x !== f);
      if (f.error === 'transient') throw transientError();
      if (f.error === 'network') throw networkError();
      if (f.error === 'slow') {
        if (maxTimeMS !== undefined) throw timeLimitError();
        throw new Error(`mingo-db: a slow ${op}${collection ? ` on ${collection}` : ''} ran without maxTimeMS (it would run as long as the server takes)`);
      }
      throw f.error ?? new Error(`injected failure of ${op}${collection ? ` on ${collection}` : ''}`);
    }
  }

  /** Waits while a hold on this op is armed (the hold is consumed by the first call). */
  async maybeHold(op: FaultOp, collection: string): Promise<void> {
    const h = this.holds.find((x) => x.op === op && (x.collection === undefined || x.collection === collection));
    if (!h) return;
    if (h.skip > 0) {
      h.skip--;
      return;
    }
    this.holds = this.holds.filter((x) => x !== h);
    h.reached();
    await h.released;
  }
}

const controls = new WeakMap<object, MingoControl>();

export function registerControl(db: object, control: MingoControl): void {
  controls.set(db, control);
}

export function controlOf(db: Db): MingoControl {
  const c = controls.get(db);
  if (!c) throw new Error('mingo-db: not a database made by createMingoDb()');
  return c;
}

/** Makes the `nth` matching call of `spec.op` throw. */
export function injectFault(db: Db, spec: FaultSpec): void {
  controlOf(db).inject(spec);
}

/**
 * Holds the `nth` next call (default 1) of `op` (on `collection`, if given) before it acts:
 * `reached` resolves when the call arrives, and the call proceeds after `release()`.
 */
export function holdNext(db: Db, op: FaultOp, collection?: string, nth = 1): { reached: Promise<void>; release: () => void } {
  return controlOf(db).hold(op, collection, nth);
}

/**
 * The next `count` transaction commits (default: every one from now on) are applied but their
 * write concern is never satisfied — a majority of the replica set is down or lagging — so they
 * fail as unacknowledgedCommit says.
 */
export function stallCommits(db: Db, count = Number.POSITIVE_INFINITY): void {
  controlOf(db).stallCommits(count);
}

/** How many times `op` was called (on `collection`, if given — then only calls naming it). */
export function callCount(db: Db, op: FaultOp, collection?: string): number {
  return controlOf(db).calls.get(collection ? `${op}:${collection}` : op) ?? 0;
}
