import type { ChangeEvent } from '@plinth/shared';
import type { Subscription } from './subscription';

/** A record a subscription's read rule looked up (get/exists), as records' subscribe answered it. */
export interface LookedUp {
  collection: string;
  id: string;
}

/** What the index needs of a connection: its project (the connection type itself stays the caller's). */
interface Holder {
  readonly project: string;
}

interface Entry<C> {
  conn: C;
  sub: Subscription;
}

/**
 * Which subscriptions' predicates were resolved with which looked-up records (docs/realtime.md
 * "Rules that read other records"): a change to one of those records resolves them again.
 */
export class LookupIndex<C extends Holder> {
  private readonly byRecord = new Map<string, Set<Entry<C>>>();
  private readonly bySub = new Map<Subscription, { entry: Entry<C>; keys: string[] }>();

  /** The records `sub` depends on now (replacing what it depended on before). */
  set(conn: C, sub: Subscription, lookups: readonly LookedUp[]): void {
    this.remove(sub);
    if (lookups.length === 0 || sub.ended) return;
    const entry = { conn, sub };
    const keys = lookups.map((l) => `${conn.project}\n${l.collection}\n${l.id}`);
    for (const key of keys) {
      let set = this.byRecord.get(key);
      if (!set) this.byRecord.set(key, (set = new Set()));
      set.add(entry);
    }
    this.bySub.set(sub, { entry, keys });
  }

  remove(sub: Subscription): void {
    const known = this.bySub.get(sub);
    if (!known) return;
    this.bySub.delete(sub);
    for (const key of known.keys) {
      const set = this.byRecord.get(key);
      set?.delete(known.entry);
      if (set?.size === 0) this.byRecord.delete(key);
    }
  }

  /** The subscriptions one of whose looked-up records these events change, each once. */
  affected(events: readonly ChangeEvent[]): Entry<C>[] {
    if (this.byRecord.size === 0) return [];
    const out = new Set<Entry<C>>();
    for (const e of events) {
      const id = e.record?.id;
      if (id === undefined) continue;
      for (const entry of this.byRecord.get(`${e.project}\n${e.collection}\n${id}`) ?? []) out.add(entry);
    }
    return [...out];
  }
}
