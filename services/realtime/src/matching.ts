import { matchesPredicate, type ChangeEvent, type Predicate } from '@plinth/shared';
import type { DeliveredEvent } from './protocol';

/**
 * Deliveries are shared objects (one per event and kind), so they are serialized once for all
 * the subscriptions that receive them. Never mutate one.
 */
const CACHE = new WeakMap<ChangeEvent, Partial<Record<DeliveredEvent['kind'], DeliveredEvent>>>();

function shared(event: ChangeEvent, make: () => DeliveredEvent): DeliveredEvent {
  let byKind = CACHE.get(event);
  if (!byKind) CACHE.set(event, (byKind = {}));
  const d = make();
  return (byKind[d.kind] ??= d);
}

/**
 * What one record change means to one subscription (in memory, no database read): create,
 * update, delete, enter (an update moved the record into the predicate), leave (out of it), or
 * nothing. The predicate is the read rule's residual AND the client's where, so a record the
 * client may not read is never sent; a `leave` carries only the id and version.
 */
export function deliveryFor(event: ChangeEvent, predicate: Predicate): DeliveredEvent | null {
  const d = decide(event, predicate);
  return d ? shared(event, () => d) : null;
}

function decide(event: ChangeEvent, predicate: Predicate): DeliveredEvent | null {
  const { record, previous, seq } = event;
  if (!record) return null;
  switch (event.kind) {
    case 'create':
      return matchesPredicate(record, predicate) ? { kind: 'create', seq, record } : null;
    case 'delete': {
      const last = previous ?? record;
      return matchesPredicate(last, predicate) ? { kind: 'delete', seq, record: last } : null;
    }
    case 'update': {
      const was = previous !== undefined && matchesPredicate(previous, predicate);
      const now = matchesPredicate(record, predicate);
      if (was && now) return { kind: 'update', seq, record };
      if (now) return { kind: 'enter', seq, record };
      if (was) return { kind: 'leave', seq, record: { id: record.id, version: record.version } };
      return null;
    }
    default:
      return null;
  }
}
