import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { deliveryJobId, type WebhookEvent, type WebhookQueue } from '@plinth/shared';
import type { ChangeEventSource } from './change-event-source';
import { recordWebhookEvent } from './webhook-events';
import type { StoredWebhook, WebhookStore } from './webhook-store';

/** How long delivered deliveries stay listed (dead ones stay until replayed or the webhook goes). */
export const DELIVERED_KEPT_MS = 7 * 24 * 3600 * 1000;

/** Does the webhook want this event? */
export function wants(hook: StoredWebhook, event: WebhookEvent): boolean {
  if (!hook.enabled || !hook.events.includes(event.type)) return false;
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
    await store.addDelivery(hook.project, { id, webhook: hook.id, event_id: event.id, event_type: event.type }, now);
    await queue.enqueue({ id, project, kind: 'deliver', webhook: hook.id, event });
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
}

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
  private stopping = false;
  private loop: Promise<void> | null = null;
  private wakeUp: (() => void) | null = null;
  private woken = false;

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

  /** Once a minute: delivered deliveries older than DELIVERED_KEPT_MS go, 1,000 at a time. */
  private async pruneDelivered(now = Date.now()): Promise<void> {
    if (now - this.lastPrune < 60_000) return;
    this.lastPrune = now;
    const before = new Date(now - DELIVERED_KEPT_MS).toISOString();
    while (this.running && (await this.opts.store.pruneDelivered(before, 1000)) === 1000);
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.woken = false;
      try {
        await this.dispatchOnce();
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
