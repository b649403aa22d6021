import { OverloadedError, UnavailableError } from './errors';

/**
 * Admission control for a pool of scarce capacity (query reader threads, the hashing pool, mail
 * sends): at most `concurrency` tasks run at once, the rest wait in a bounded queue, and a task
 * that cannot be admitted is refused at once with OverloadedError (503 + Retry-After) instead of
 * waiting behind work its client may have given up on.
 *
 * Fair share: waiting tasks are grouped by project, and inside a project by caller (a user, an
 * anonymous address, a key). A freed slot goes to the next project in turn, and inside it to the
 * next caller in turn, so one caller's burst waits behind itself, not in front of everyone else.
 * `maxRunningPerProject` / `maxRunningPerCaller` keep slots free for others even when one caller's
 * tasks arrive first and are long.
 *
 * Bounds: the queue holds at most `maxQueued` tasks (`maxQueuedPerProject` of one project,
 * `maxQueuedPerCaller` of one caller); a task waits at most `maxWaitMs` before it starts; a task
 * whose `signal` aborts while it waits is dropped before it starts. With `maxPredictedWaitMs`, a
 * task that would wait longer is refused when it arrives rather than when its time is up.
 * Guarantees: every `run` settles exactly once; a refused or dropped task never runs; `close()`
 * refuses everything still waiting.
 */
export interface AdmissionQueueOptions {
  /** Names the pool in messages ("queries", "password hashing"). */
  name: string;
  /** Tasks running at once. */
  concurrency: number;
  /** Tasks waiting at once, over all callers. */
  maxQueued: number;
  /**
   * Tasks of one project waiting at once (default: maxQueued). Below maxQueued, it keeps room in
   * the queue for other projects while one project floods it.
   */
  maxQueuedPerProject?: number;
  /** Tasks of one caller waiting at once (default: maxQueued). */
  maxQueuedPerCaller?: number;
  /** Longest wait before a task starts; past it the task is refused (default 1000 ms). */
  maxWaitMs?: number;
  /** Slots one project may hold at once (default: concurrency). */
  maxRunningPerProject?: number;
  /** Slots one caller may hold at once (default: maxRunningPerProject). */
  maxRunningPerCaller?: number;
  /** The Retry-After of a refusal, in seconds (default 1). */
  retryAfterSeconds?: number;
  /**
   * Refuse at once a task whose predicted wait exceeds this: the tasks that would start before
   * it in fair turn, times the mean run time of recent tasks, divided by concurrency. For pools
   * whose tasks cost about the same (password hashes), so that a refusal comes in a millisecond
   * instead of after maxWaitMs; set below maxWaitMs, so that the deadline rarely has to refuse
   * what the prediction admitted. Default: no prediction.
   */
  maxPredictedWaitMs?: number;
}

/** Who a task is for: the unit of fair share. */
export interface AdmissionTicket {
  project: string;
  /** A user id, an anonymous client address, a key id — whatever the caller's share is keyed by. */
  caller: string;
  /** Aborted when the client has gone: a waiting task is then dropped before it starts. */
  signal?: AbortSignal;
  /**
   * This task's longest wait, when shorter than the queue's `maxWaitMs` (what is left of a
   * request's own time budget): past it the task is refused, as past the queue's bound.
   */
  maxWaitMs?: number;
}

/** What a task learns when it starts. */
export interface AdmissionStart {
  /** Milliseconds the task waited in the queue (count it against the task's own time budget). */
  waitedMs: number;
}

interface Waiting {
  ticket: AdmissionTicket;
  enqueuedAt: number;
  start: () => void;
  refuse: (error: Error) => void;
  timer: NodeJS.Timeout | undefined;
  onAbort: (() => void) | undefined;
}

/** A ring of keys served in turn; each key's entry is removed when it has nothing left. */
class Ring<V> {
  readonly items = new Map<string, V>();
  private order: string[] = [];
  private next = 0;

  get(key: string): V | undefined {
    return this.items.get(key);
  }
  add(key: string, value: V): void {
    this.items.set(key, value);
    this.order.push(key);
  }
  remove(key: string): void {
    if (!this.items.delete(key)) return;
    const at = this.order.indexOf(key);
    this.order.splice(at, 1);
    if (at < this.next) this.next -= 1;
    if (this.next >= this.order.length) this.next = 0;
  }
  /** The first key, in turn from where the last pick stopped, that `eligible` accepts; advances past it. */
  pick(eligible: (key: string, value: V) => boolean): string | undefined {
    for (let i = 0; i < this.order.length; i += 1) {
      const at = (this.next + i) % this.order.length;
      const key = this.order[at]!;
      if (eligible(key, this.items.get(key)!)) {
        this.next = (at + 1) % this.order.length;
        return key;
      }
    }
    return undefined;
  }
}

export class AdmissionQueue {
  private readonly opts: Required<AdmissionQueueOptions>;
  /** project → caller → waiting tasks, oldest first. */
  private readonly waiting = new Ring<Ring<Waiting[]>>();
  private readonly runningByProject = new Map<string, number>();
  private readonly runningByCaller = new Map<string, number>();
  private readonly queuedByCaller = new Map<string, number>();
  private readonly queuedByProject = new Map<string, number>();
  /** Moving mean of recent tasks' run time (ms); undefined until one has finished. */
  private meanRunMs: number | undefined;
  private runningCount = 0;
  private queuedCount = 0;
  private closed = false;

  constructor(options: AdmissionQueueOptions) {
    const maxRunningPerProject = options.maxRunningPerProject ?? options.concurrency;
    this.opts = {
      maxQueuedPerProject: options.maxQueued,
      maxQueuedPerCaller: options.maxQueued,
      maxWaitMs: 1000,
      maxPredictedWaitMs: Infinity,
      maxRunningPerCaller: maxRunningPerProject,
      retryAfterSeconds: 1,
      ...options,
      maxRunningPerProject,
    };
    if (this.opts.concurrency < 1) throw new RangeError('AdmissionQueue: concurrency must be at least 1');
  }

  /** Tasks running now. */
  get running(): number {
    return this.runningCount;
  }
  /** Tasks waiting now. */
  get queued(): number {
    return this.queuedCount;
  }

  /**
   * Runs `task` once a slot is free and it is this caller's turn; refuses at once (rejects with
   * OverloadedError) when the queue or the caller's share of it is full, or when the task would
   * wait past `maxWaitMs`. The slot is held until the task's promise settles.
   */
  run<T>(ticket: AdmissionTicket, task: (start: AdmissionStart) => Promise<T> | T): Promise<T> {
    if (this.closed) return Promise.reject(new UnavailableError(`The ${this.opts.name} pool is shutting down.`));
    if (ticket.signal?.aborted) return Promise.reject(new UnavailableError('The client went away.'));
    const callerKey = `${ticket.project}\u0000${ticket.caller}`;
    if (this.queuedCount === 0 && this.canStart(ticket.project, callerKey)) {
      return this.execute(ticket.project, callerKey, task, 0);
    }
    if (!this.mayQueue(ticket.project, callerKey)) return Promise.reject(this.refusal());
    return new Promise<T>((resolve, reject) => {
      const entry: Waiting = {
        ticket,
        enqueuedAt: performance.now(),
        start: () => {
          this.execute(ticket.project, callerKey, task, performance.now() - entry.enqueuedAt).then(resolve, reject);
        },
        refuse: reject,
        timer: undefined,
        onAbort: undefined,
      };
      const maxWaitMs = Math.min(this.opts.maxWaitMs, ticket.maxWaitMs ?? Infinity);
      entry.timer = setTimeout(() => this.dropWaiting(entry, callerKey, this.refusal()), Math.max(0, maxWaitMs));
      entry.timer.unref?.();
      if (ticket.signal) {
        entry.onAbort = () => this.dropWaiting(entry, callerKey, new UnavailableError('The client went away.'));
        ticket.signal.addEventListener('abort', entry.onAbort, { once: true });
      }
      this.enqueue(ticket.project, callerKey, entry);
      // A slot may be free for this caller even though others wait (they are at their own caps).
      this.startWaiting();
    });
  }

  /**
   * Throws what `run` would refuse this ticket with right now (OverloadedError, or 503 while
   * closed): a cheap check before the work that leads up to the task (reading the user a password
   * is compared with), so that a refusal costs as little as possible. `run` still decides.
   */
  checkAdmission(ticket: Pick<AdmissionTicket, 'project' | 'caller'>): void {
    if (this.closed) throw new UnavailableError(`The ${this.opts.name} pool is shutting down.`);
    const callerKey = `${ticket.project}\u0000${ticket.caller}`;
    if (this.queuedCount === 0 && this.canStart(ticket.project, callerKey)) return;
    if (!this.mayQueue(ticket.project, callerKey)) throw this.refusal();
  }

  /** Refuses every waiting task (shutdown past its deadline); running tasks finish. */
  close(): void {
    this.closed = true;
    for (const project of [...this.waiting.items.values()]) {
      for (const list of [...project.items.values()]) {
        for (const entry of [...list]) {
          this.dropWaiting(entry, `${entry.ticket.project}\u0000${entry.ticket.caller}`, new UnavailableError(`The ${this.opts.name} pool is shutting down.`));
        }
      }
    }
  }

  private refusal(): OverloadedError {
    return new OverloadedError(this.opts.retryAfterSeconds, `The server is busy (${this.opts.name}); try again shortly.`);
  }

  /**
   * Whether a task of this caller that cannot start now may wait: every bound has room for it.
   * While fewer tasks wait than there are slots, the prediction does not refuse: each of them
   * starts at the next freed slot, and the pool never idles for want of waiting work.
   */
  private mayQueue(project: string, callerKey: string): boolean {
    return (
      this.queuedCount < this.opts.maxQueued &&
      (this.queuedByProject.get(project) ?? 0) < this.opts.maxQueuedPerProject &&
      (this.queuedByCaller.get(callerKey) ?? 0) < this.opts.maxQueuedPerCaller &&
      (this.queuedCount < this.opts.concurrency || this.predictedWaitMs(project, callerKey) <= this.opts.maxPredictedWaitMs)
    );
  }

  /**
   * How long a new task of this caller would wait: in fair turn, each other caller of its project
   * starts at most as many tasks before it as this caller has waiting plus one, and each other
   * project at most as many as its own project starts before it. An estimate (running caps and
   * later arrivals are ignored), meant to refuse early what the deadline would refuse late.
   */
  private predictedWaitMs(project: string, callerKey: string): number {
    if (this.meanRunMs === undefined || this.opts.maxPredictedWaitMs === Infinity) return 0;
    const callers = this.waiting.get(project);
    const turn = (callers?.get(callerKey)?.length ?? 0) + 1;
    let inProject = turn;
    if (callers) for (const [key, list] of callers.items) if (key !== callerKey) inProject += Math.min(list.length, turn);
    let ahead = inProject;
    for (const p of this.waiting.items.keys()) if (p !== project) ahead += Math.min(this.queuedByProject.get(p) ?? 0, inProject);
    return (ahead * this.meanRunMs) / this.opts.concurrency;
  }

  private canStart(project: string, callerKey: string): boolean {
    return (
      this.runningCount < this.opts.concurrency &&
      (this.runningByProject.get(project) ?? 0) < this.opts.maxRunningPerProject &&
      (this.runningByCaller.get(callerKey) ?? 0) < this.opts.maxRunningPerCaller
    );
  }

  private async execute<T>(project: string, callerKey: string, task: (start: AdmissionStart) => Promise<T> | T, waitedMs: number): Promise<T> {
    this.runningCount += 1;
    bump(this.runningByProject, project, 1);
    bump(this.runningByCaller, callerKey, 1);
    const started = performance.now();
    try {
      return await task({ waitedMs });
    } finally {
      const ran = performance.now() - started;
      this.meanRunMs = this.meanRunMs === undefined ? ran : this.meanRunMs + (ran - this.meanRunMs) / 8;
      this.runningCount -= 1;
      bump(this.runningByProject, project, -1);
      bump(this.runningByCaller, callerKey, -1);
      this.startWaiting();
    }
  }

  private enqueue(project: string, callerKey: string, entry: Waiting): void {
    let callers = this.waiting.get(project);
    if (!callers) {
      callers = new Ring<Waiting[]>();
      this.waiting.add(project, callers);
    }
    const list = callers.get(callerKey);
    if (list) list.push(entry);
    else callers.add(callerKey, [entry]);
    this.queuedCount += 1;
    bump(this.queuedByProject, project, 1);
    bump(this.queuedByCaller, callerKey, 1);
  }

  /** Starts waiting tasks, in fair turn, while slots are free for them. */
  private startWaiting(): void {
    while (this.queuedCount > 0 && this.runningCount < this.opts.concurrency) {
      let chosenCaller: string | undefined;
      const project = this.waiting.pick((p, callers) => {
        if ((this.runningByProject.get(p) ?? 0) >= this.opts.maxRunningPerProject) return false;
        chosenCaller = callers.pick((c) => (this.runningByCaller.get(c) ?? 0) < this.opts.maxRunningPerCaller);
        return chosenCaller !== undefined;
      });
      if (project === undefined || chosenCaller === undefined) return;
      const entry = this.waiting.get(project)!.get(chosenCaller)![0]!;
      this.unlink(entry, chosenCaller);
      entry.start();
    }
  }

  private dropWaiting(entry: Waiting, callerKey: string, error: Error): void {
    if (!this.unlink(entry, callerKey)) return;
    entry.refuse(error);
  }

  /** Takes a waiting entry out of the queue; false when it was no longer there. */
  private unlink(entry: Waiting, callerKey: string): boolean {
    const callers = this.waiting.get(entry.ticket.project);
    const list = callers?.get(callerKey);
    const at = list ? list.indexOf(entry) : -1;
    if (!callers || !list || at < 0) return false;
    list.splice(at, 1);
    if (list.length === 0) callers.remove(callerKey);
    if (callers.items.size === 0) this.waiting.remove(entry.ticket.project);
    this.queuedCount -= 1;
    bump(this.queuedByProject, entry.ticket.project, -1);
    bump(this.queuedByCaller, callerKey, -1);
    if (entry.timer) clearTimeout(entry.timer);
    if (entry.onAbort) entry.ticket.signal?.removeEventListener('abort', entry.onAbort);
    return true;
  }
}

function bump(map: Map<string, number>, key: string, by: number): void {
  const next = (map.get(key) ?? 0) + by;
  if (next <= 0) map.delete(key);
  else map.set(key, next);
}
