import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { deliveryJobId, type WebhookEvent, type WebhookQueue } from '@plinth/shared';
import type { ChangeEventSource } from './change-event-source';
import { recordWebhookEvent } from './webhook-events';
import type { StoredWebhook, WebhookStore } from './webhook-store';

/** How long delivered deliveries stay listed (dead ones stay until replayed or the webhook goes). */
export const DELIVERED_KEPT_MS = 7 * 24 * 3600 * 1000;

/**
 * Does the webhook want this event? Only if it is enabled now and was already enabled when the
 * event was committed: the dispatcher reads the log a little after the commit, and a webhook
 * created or enabled again in between does not take the changes from before.
 */
export function wants(hook: StoredWebhook, event: WebhookEvent): boolean {
  if (!hook.enabled || !hook.events.includes(event.type) || event.timestamp < hook.enabled_at) return false;
  return event.collection === undefined || hook.collections === null || hook.collections.includes(event.collection);
}

/**
 * Puts one event on the queue for every webhook of the project that wants it: a delivery row
 * (pending) and a `deliver` job whose id is the webhook and event ids, so doing it again (a
 * crash before the cursor moved, a second dispatcher) delivers nothing twice.
 */
export async function fanOut(store: WebhookStore, queue: WebhookQueue, project: string, event: WebhookEvent, hooks: StoredWebhook[], now: string): Promise<number> {
  let n = 0;
  for (const hook of hooks) {
    if (!wants(hook, event)) continue;
    const id = deliveryJobId(hook.id, event.id);
    const status = await store.addDelivery(hook.project, { id, webhook: hook.id, event_id: event.id, event_type: event.type }, now, event);
    // An event fanned out again (a user event offered again to a Redis that lost its jobs): a
    // delivery already made or dead is not sent twice; a pending one's job is enqueued (again).
    if (status === 'pending') await queue.enqueue({ id, project, kind: 'deliver', webhook: hook.id, event });
    n++;
  }
  return n;
}

export interface DispatcherOptions {
  source: ChangeEventSource;
  store: WebhookStore;
  queue: WebhookQueue;
  logger: Logger;
  /** Longest wait between two reads of the log (a `wake` reads at once). */
  pollMs: number;
  /** How long the dispatch lease lasts without renewal (another replica takes over after). */
  leaseMs?: number;
  /** Changes read at once. */
  batchSize?: number;
  /**
   * Shortest time between the starts of two passes (default WAKE_GAP_MS): a `wake` after every
   * write coalesces into one pass per gap, so a busy writer does not pay the pass's lease and
   * cursor writes once per change.
   */
  wakeGapMs?: number;
  /** How often the lease holder enqueues every pending delivery's job again (requeuePending); default 60 s. */
  requeueMs?: number;
}

/**
 * Default shortest gap between two passes. Every pass renews the lease (a write to the webhook
 * store) and commits the cursor (a write to the records' database, whose single writer every
 * record write waits for): one pass per create cost a standalone worker about a tenth of its
 * create throughput; one per 50 ms costs nothing measurable, and delays a delivery by at most that.
 */
export const WAKE_GAP_MS = 50;

/**
 * Feeds webhook deliveries from the change log (docs/webhooks.md "How deliveries are fed"):
 * reads the changes after its durable cursor, fans each out to the queue, then commits the
 * cursor — so no committed change is skipped, and one redone after a crash is enqueued under
 * the same job ids (no second delivery). Among replicas only the holder of the lease dispatches.
 */
export class WebhookDispatcher {
  private readonly holder = randomBytes(9).toString('base64url');
  private running = false;
  private lastPrune = 0;
  private lastRequeue = 0;
  private stopping = false;
  private loop: Promise<void> | null = null;
  private wakeUp: (() => void) | null = null;
  private woken = false;
  private pauseEnd: (() => void) | null = null;

  constructor(private readonly opts: DispatcherOptions) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = false;
    this.loop = this.run();
  }

  /** A change was appended: read now rather than at the next poll. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.stopping = true;
    this.wakeUp?.();
    this.pauseEnd?.();
    await this.loop;
  }

  /**
   * One pass while holding the lease: every change committed so far is on the queue when it
   * resolves. Returns how many deliveries were enqueued.
   */
  async dispatchOnce(): Promise<number> {
    const { source, store, queue, logger } = this.opts;
    const leaseMs = this.opts.leaseMs ?? 15_000;
    let total = 0;
    for (;;) {
      if (!(await store.acquireLease('webhook-dispatch', this.holder, Date.now(), leaseMs))) return total;
      // No webhook anywhere: nothing committed so far has a receiver, so the cursor moves to the
      // head without reading a change (a busy deployment without webhooks reads none of its
      // records' data here). The head is read first: a change committed after a webhook created
      // meanwhile lies beyond it and is read at the next pass.
      const head = await source.head();
      if (!(await store.any())) {
        await source.commit(head);
        return total;
      }
      const batch = await source.read(this.opts.batchSize ?? 500);
      if (batch.lost) logger.error('webhook dispatch: changes were trimmed from the log before they were dispatched; those are not delivered');
      const hooksOf = new Map<string, StoredWebhook[]>();
      const now = new Date().toISOString();
      for (const change of batch.events) {
        const event = recordWebhookEvent(change, source.eventId(change));
        if (!event) continue;
        let hooks = hooksOf.get(change.project);
        if (!hooks) hooksOf.set(change.project, (hooks = await store.list(change.project)));
        if (hooks.length > 0) total += await fanOut(store, queue, change.project, event, hooks, now);
      }
      await source.commit(batch.next);
      if (batch.events.length === 0 || this.stopping) return total;
    }
  }

  /**
   * Enqueues every pending delivery's job again, under its own id: a job the queue still holds
   * (waiting, retrying, running, or completed within its retention) makes this a no-op, and one
   * the queue lost — a Redis restarted empty, a restore — is made again and delivered. Run by the
   * lease holder every `requeueMs`. Returns how many deliveries were looked at.
   */
  async requeuePending(): Promise<number> {
    const { store, queue } = this.opts;
    let n = 0;
    let page = await store.pendingDeliveries(500);
    while (page.length > 0 && !this.stopping) {
      for (const d of page) await queue.enqueue({ id: d.id, project: d.project, kind: 'deliver', webhook: d.webhook, event: d.event });
      n += page.length;
      page = await store.pendingDeliveries(500, page[page.length - 1]);
    }
    return n;
  }

  private async requeueDue(now = Date.now()): Promise<void> {
    if (now - this.lastRequeue < (this.opts.requeueMs ?? 60_000)) return;
    if (!(await this.opts.store.acquireLease('webhook-dispatch', this.holder, now, this.opts.leaseMs ?? 15_000))) return;
    this.lastRequeue = now;
    await this.requeuePending();
  }

  /** Once a minute: delivered deliveries older than DELIVERED_KEPT_MS go, 1,000 at a time. */
  private async pruneDelivered(now = Date.now()): Promise<void> {
    if (now - this.lastPrune < 60_000) return;
    this.lastPrune = now;
    const before = new Date(now - DELIVERED_KEPT_MS).toISOString();
    while (this.running && (await this.opts.store.pruneDelivered(before, 1000)) === 1000);
  }

  /** Waits `ms`, or less when the dispatcher stops. */
  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      this.pauseEnd = done;
      function done() {
        clearTimeout(timer);
        resolve();
      }
    }).finally(() => (this.pauseEnd = null));
  }

  private async run(): Promise<void> {
    const gap = this.opts.wakeGapMs ?? WAKE_GAP_MS;
    let lastPass = 0;
    while (this.running) {
      const early = lastPass + gap - Date.now();
      if (early > 0) await this.pause(early);
      if (!this.running) break;
      lastPass = Date.now();
      this.woken = false;
      try {
        await this.dispatchOnce();
        await this.requeueDue();
        await this.pruneDelivered();
      } catch (err) {
        this.opts.logger.warn({ err }, 'webhook dispatch failed; retried at the next poll');
      }
      if (!this.running || this.woken) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, this.opts.pollMs);
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.wakeUp = () => {
          this.wakeUp = null;
          done();
        };
      });
    }
  }
}
