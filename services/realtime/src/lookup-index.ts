import type { ChangeEvent } from '@plinth/shared';
import type { Connection } from './connection';
import type { Subscription } from './subscription';

/** A record a subscription's read rule looked up (get/exists), as records' subscribe answered it. */
export interface LookedUp {
  collection: string;
  id: string;
}

interface Entry {
  conn: Connection;
  sub: Subscription;
}

/**
 * Which subscriptions' predicates were resolved with which looked-up records (docs/realtime.md
 * "Rules that read other records"): a change to one of those records resolves them again.
 */
export class LookupIndex {
  private readonly byRecord = new Map<string, Set<Entry>>();
  private readonly bySub = new Map<Subscription, { entry: Entry; keys: string[] }>();

  /** The records `sub` depends on now (replacing what it depended on before). */
  set(conn: Connection, sub: Subscription, lookups: readonly LookedUp[]): void {
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
  affected(events: readonly ChangeEvent[]): Entry[] {
    if (this.byRecord.size === 0) return [];
    const out = new Set<Entry>();
    for (const e of events) {
      const id = e.record?.id;
      if (id === undefined) continue;
      for (const entry of this.byRecord.get(`${e.project}\n${e.collection}\n${id}`) ?? []) out.add(entry);
    }
    return [...out];
  }
}
