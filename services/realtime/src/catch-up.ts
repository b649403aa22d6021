import { matchesPredicate, type ChangeEvent, type EventBus, type Predicate, type ProjectId } from '@plinth/shared';
import type { DeliveredEvent } from './protocol';

/** Bounds of one catch-up (docs/realtime.md "Resume"). */
export interface CatchUpLimits {
  /** Events of the collection one catch-up may replay; more → resync (counted on the index first). */
  maxEvents: number;
  /** Stored bytes one catch-up may read; more → resync. */
  maxBytes: number;
  /** Stored bytes read per page; the event loop runs between pages. */
  pageBytes: number;
}

/** What a catch-up reads is charged to the connection's and the project's budgets. */
export interface CatchUpBudget {
  covers(bytes: number): boolean;
  spend(bytes: number): void;
}

export interface CatchUpRequest {
  bus: EventBus;
  project: ProjectId;
  collection: string;
  /** Replay the changes after this seq. */
  after: number;
  /** The epoch `after` belongs to: a page read in another epoch means resync. */
  epoch: string;
  /** The subscription's predicate and collection revision, as resolved now. */
  predicate: Predicate;
  revision: number;
  /**
   * The window starts at the client's own position (resume_from, a paused subscription): a rule
   * or field change inside it means the records the client holds were chosen under other rules.
   */
  fromClient: boolean;
  limits: CatchUpLimits;
  budget: CatchUpBudget;
  /** True once nobody wants the answer (the subscription ended, or restarted under a new token). */
  stale: () => boolean;
}

export type CatchUpOutcome =
  | { outcome: 'replayed'; events: DeliveredEvent[]; committedAt: number[]; next: number }
  /** History trimmed, over a limit or budget, or the rules changed since the client's position. */
  | { outcome: 'resync' }
  | { outcome: 'resubscribe'; reason: 'collection_changed' | 'collection_deleted' }
  | { outcome: 'stale' };

const RESYNC: CatchUpOutcome = { outcome: 'resync' };
const STALE: CatchUpOutcome = { outcome: 'stale' };
/** Events per page at most (pages are bounded by `pageBytes` first in practice). */
const PAGE_EVENTS = 500;

/**
 * Replays a collection's history after a position, as it is now: one delivery per record
 * changed in the window, chosen from the record's last event there (its current state, since
 * the window reaches the log's head) and the subscription's current predicate:
 *
 * - deleted since → `delete` with only `{id, version}`, and only when the record matched before
 *   the window (the client may hold it); created and deleted inside it → nothing;
 * - matches now → `create` (created in the window), `update` (matched before it) or `enter`;
 * - does not match now → `leave` with `{id, version}` when it matched before, else nothing:
 *   a version the subscriber may no longer read is never sent.
 *
 * Work: the index is counted first (`maxEvents`), then pages of at most `pageBytes` are read,
 * each charged to the budget, with the event loop running between pages. Memory: the last
 * event of each record, within `maxBytes`.
 */
export async function catchUp(req: CatchUpRequest): Promise<CatchUpOutcome> {
  const { bus, project, collection, limits } = req;
  const counted = await bus.countAfter(project, collection, req.after, limits.maxEvents);
  if (req.stale()) return STALE;
  if (counted !== null && counted > limits.maxEvents) return RESYNC;
  const compactor = new ReplayCompactor(req.predicate);
  let after = req.after;
  let bytes = 0;
  let events = 0;
  let rulesChanged = false;
  for (;;) {
    if (!req.budget.covers(Math.min(limits.pageBytes, limits.maxBytes - bytes))) return RESYNC;
    const page = await bus.read(project, collection, after, { limit: PAGE_EVENTS, maxBytes: limits.pageBytes });
    if (req.stale()) return STALE;
    if (page.trimmed || page.epoch !== req.epoch) return RESYNC;
    req.budget.spend(page.bytes);
    bytes += page.bytes;
    events += page.events.length;
    if (bytes > limits.maxBytes || events > limits.maxEvents) return RESYNC;
    for (const e of page.events) {
      if (e.kind !== 'collection') {
        if (!rulesChanged) compactor.add(e);
        continue;
      }
      const revision = e.revision ?? null;
      if (revision === null) return { outcome: 'resubscribe', reason: 'collection_deleted' };
      if (revision > req.revision) return { outcome: 'resubscribe', reason: 'collection_changed' };
      // Changed before the predicate was resolved: current for a window of ours, not for the client's.
      if (req.fromClient) rulesChanged = true;
    }
    after = page.next;
    if (page.done) break;
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (req.stale()) return STALE;
  }
  if (rulesChanged) return RESYNC;
  return { outcome: 'replayed', ...compactor.deliveries(), next: after };
}

interface Changed {
  created: boolean;
  /** The record matched the predicate before the window (the client may hold it). */
  was: boolean;
  last: ChangeEvent;
}

/** Keeps, per record, whether it matched before the window and its last event in it. */
export class ReplayCompactor {
  private readonly byRecord = new Map<string, Changed>();

  constructor(private readonly predicate: Predicate) {}

  add(e: ChangeEvent): void {
    const id = e.record?.id;
    if (id === undefined) return;
    // The record before the write is needed once, for the first event: drop it from the rest.
    const last = e.previous === undefined ? e : { ...e, previous: undefined };
    const known = this.byRecord.get(id);
    if (known) {
      known.last = last;
      return;
    }
    const was = e.kind !== 'create' && e.previous !== undefined && matchesPredicate(e.previous, this.predicate);
    this.byRecord.set(id, { created: e.kind === 'create', was, last });
  }

  /** One delivery per record that means something to the client, in the order of their last events. */
  deliveries(): { events: DeliveredEvent[]; committedAt: number[] } {
    const changed = [...this.byRecord.values()].sort((a, b) => a.last.seq - b.last.seq);
    const events: DeliveredEvent[] = [];
    const committedAt: number[] = [];
    for (const c of changed) {
      const d = delivery(c, this.predicate);
      if (!d) continue;
      events.push(d);
      committedAt.push(c.last.committed_at);
    }
    return { events, committedAt };
  }
}

function delivery({ created, was, last }: Changed, predicate: Predicate): DeliveredEvent | null {
  const record = last.record!;
  const { seq } = last;
  if (last.kind === 'delete') return was ? { kind: 'delete', seq, record: { id: record.id, version: record.version } } : null;
  if (matchesPredicate(record, predicate)) return { kind: created ? 'create' : was ? 'update' : 'enter', seq, record };
  return was ? { kind: 'leave', seq, record: { id: record.id, version: record.version } } : null;
}
