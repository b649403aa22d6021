import { matchesPredicate, type ChangeEvent, type Predicate } from '@plinth/shared';
import type { DeliveredEvent } from './protocol';

/**
 * What one record change means to one subscription (in memory, no database read): create,
 * update, delete, enter (an update moved the record into the predicate), leave (out of it), or
 * nothing. The predicate is the read rule's residual AND the client's where, so a record the
 * client may not read is never sent; a `leave` carries only the id and version.
 */
export function deliveryFor(event: ChangeEvent, predicate: Predicate): DeliveredEvent | null {
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
