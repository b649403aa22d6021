/** How many catch-ups may read the event log at once, and how long one may wait for its turn. */
export interface CatchUpGateLimits {
  perProject: number;
  perProcess: number;
  /** A catch-up that waited this long gives up (the subscription is answered with a resync). */
  waitMs: number;
  /** Catch-ups waiting in all; one more gives up at once. */
  maxWaiting: number;
}

interface Waiter {
  project: string;
  connection: string;
  resolve: (release: (() => void) | null) => void;
  timer: NodeJS.Timeout;
}

/**
 * Bounds the catch-ups (resume replays) of one realtime process: one at a time per connection,
 * `perProject` per project, `perProcess` in all. The others wait in arrival order, each at most
 * `waitMs`; the waiting line itself is bounded. A catch-up that does not get its turn is not an
 * error: the subscription is answered with `resync_required` and a fresh snapshot instead.
 */
export class CatchUpGate {
  private running = 0;
  private readonly byProject = new Map<string, number>();
  private readonly byConnection = new Set<string>();
  private readonly waiting: Waiter[] = [];

  constructor(private readonly limits: CatchUpGateLimits) {}

  /** Resolves with the function that frees the slot, or null when no slot came in time. */
  acquire(project: string, connection: string): Promise<(() => void) | null> {
    if (this.fits(project, connection)) return Promise.resolve(this.take(project, connection));
    if (this.waiting.length >= this.limits.maxWaiting) return Promise.resolve(null);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        project,
        connection,
        resolve,
        timer: setTimeout(() => {
          const i = this.waiting.indexOf(waiter);
          if (i >= 0) this.waiting.splice(i, 1);
          resolve(null);
        }, this.limits.waitMs),
      };
      waiter.timer.unref?.();
      this.waiting.push(waiter);
    });
  }

  private fits(project: string, connection: string): boolean {
    return (
      this.running < this.limits.perProcess &&
      (this.byProject.get(project) ?? 0) < this.limits.perProject &&
      !this.byConnection.has(connection)
    );
  }

  private take(project: string, connection: string): () => void {
    this.running++;
    this.byProject.set(project, (this.byProject.get(project) ?? 0) + 1);
    this.byConnection.add(connection);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      const left = (this.byProject.get(project) ?? 1) - 1;
      if (left > 0) this.byProject.set(project, left);
      else this.byProject.delete(project);
      this.byConnection.delete(connection);
      this.admitWaiting();
    };
  }

  private admitWaiting(): void {
    for (let i = 0; i < this.waiting.length && this.running < this.limits.perProcess; ) {
      const w = this.waiting[i]!;
      if (!this.fits(w.project, w.connection)) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      clearTimeout(w.timer);
      w.resolve(this.take(w.project, w.connection));
    }
  }
}
