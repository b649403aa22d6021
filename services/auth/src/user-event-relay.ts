import type { Logger } from 'pino';
import type { WebhookQueue } from '@plinth/shared';
import type { OutboxUserEvent, UserEventOutbox } from './store/user-event-outbox';

export interface UserEventRelayOptions {
  /** Longest wait between looks for pending rows when nothing wakes the relay, ms. Default 1000. */
  pollMs?: number;
  /** How long handed-over rows are kept (and offered again after a queue outage), ms. Default 24 h. */
  retentionMs?: number;
  /** First wait after the queue refused a job, doubled on each further refusal up to maxBackoffMs. Default 200. */
  backoffMs?: number;
  /** Default 30 s. */
  maxBackoffMs?: number;
  /** Rows handed over per pass. Default 100. */
  batch?: number;
  now?: () => number;
}

/** The webhook queue job of an outbox row: its id is derived from the event id, so a repeat is ignored. */
export function fanoutJobId(eventId: string): string {
  return `f_${eventId}`;
}

/**
 * Moves the user events' outbox rows (store/user-event-outbox.ts) to the webhook queue as
 * `fanout` jobs (docs/webhooks.md "User events"). Each row is enqueued under the job id
 * `f_<event id>` and then marked handed over; a queue that refuses (Redis down) leaves the row
 * pending and is tried again with backoff — nothing is dropped. Woken at once after a user
 * write in this process, it otherwise polls, so rows written by another replica, or left by a
 * process that died, are found too. Several replicas may run a relay on the same database: no
 * lease, they rely on the idempotent job id (two relays enqueueing the same row make one job).
 *
 * After a queue failure (and at start), once the queue takes jobs again, the relay offers the
 * queue every row handed over within the retention again: the queue ignores the ones it still
 * holds, and re-adds the ones a Redis that restarted empty has lost.
 */
export class UserEventRelay {
  private readonly pollMs: number;
  private readonly retentionMs: number;
  private readonly backoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly batch: number;
  private readonly now: () => number;
  private running = false;
  private loop: Promise<void> | null = null;
  /** Ends the current wait early; `wakeable`: a write may end it (not during a backoff). */
  private interrupt: (() => void) | null = null;
  private wakeable = false;
  private woken = false;
  private failures = 0;
  private reofferDue = true;
  private lastTrim = 0;

  constructor(
    private readonly outbox: UserEventOutbox,
    private readonly queue: Pick<WebhookQueue, 'enqueue'>,
    private readonly logger: Logger,
    opts: UserEventRelayOptions = {},
  ) {
    this.pollMs = opts.pollMs ?? 1000;
    this.retentionMs = opts.retentionMs ?? 24 * 3_600_000;
    this.backoffMs = opts.backoffMs ?? 200;
    this.maxBackoffMs = opts.maxBackoffMs ?? 30_000;
    this.batch = opts.batch ?? 100;
    this.now = opts.now ?? Date.now;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** A user write committed an event: look now rather than at the next poll. */
  wake(): void {
    this.woken = true;
    if (this.wakeable) this.interrupt?.();
  }

  /** Stops after the pass in progress; rows not handed over stay for the next start. */
  async stop(): Promise<void> {
    this.running = false;
    this.interrupt?.();
    await this.loop;
    this.loop = null;
  }

  /**
   * One pass: hands over every pending row (and re-offers handed-over ones when due). True when
   * the queue took everything, false when it refused a job (the rest stays pending).
   */
  async pass(): Promise<boolean> {
    for (;;) {
      const rows = await this.outbox.pending(this.batch);
      for (const row of rows) {
        if (!(await this.offer(row))) return false;
        await this.outbox.markHanded([row.event.id], this.now());
      }
      if (rows.length < this.batch) break;
    }
    if (this.reofferDue) {
      let after = '';
      for (;;) {
        const rows = await this.outbox.handedAfter(after, this.batch);
        for (const row of rows) if (!(await this.offer(row))) return false;
        if (rows.length < this.batch) break;
        after = rows[rows.length - 1]!.event.id;
      }
      this.reofferDue = false;
    }
    if (this.now() - this.lastTrim >= 60_000) {
      this.lastTrim = this.now();
      await this.outbox.trim(this.now() - this.retentionMs);
    }
    return true;
  }

  private async offer(row: OutboxUserEvent): Promise<boolean> {
    try {
      await this.queue.enqueue({ id: fanoutJobId(row.event.id), project: row.project, kind: 'fanout', event: row.event });
      return true;
    } catch (err) {
      if (err instanceof TypeError) {
        // A job the queue can never take (a bug, not an outage): logged and passed over so it does not hold up the others.
        this.logger.error({ err, project: row.project, event_id: row.event.id }, 'user event refused by the webhook queue as malformed; skipped');
        return true;
      }
      this.failures += 1;
      // The queue may have lost what it held (a Redis that comes back empty): offer it all again once it takes jobs.
      this.reofferDue = true;
      this.logger.warn({ err, project: row.project, event_id: row.event.id, failures: this.failures }, 'user event not handed to the webhook queue yet; retrying');
      return false;
    }
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.woken = false;
      let ok = false;
      try {
        ok = await this.pass();
      } catch (err) {
        // The users' database refused (it is down or busy): the rows are safe there; look again later.
        this.logger.warn({ err }, 'user event relay: outbox not readable; retrying');
      }
      if (ok) this.failures = 0;
      const wait = ok ? this.pollMs : Math.min(this.maxBackoffMs, this.backoffMs * 2 ** Math.max(0, this.failures - 1));
      if (!this.running) break;
      // A write during the pass is looked at at once (unless the queue is refusing: then the backoff holds).
      if (ok && this.woken) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, wait);
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.interrupt = done;
        this.wakeable = ok;
        if (!this.running) done();
      });
      this.interrupt = null;
      this.wakeable = false;
    }
  }
}
