import type { ProjectId } from '../types';

/**
 * Something every process must act on at once: it drops what it caches of the project.
 *
 * - `project-deleted`: the project's data, sessions and signing keys are gone; a project created
 *   later with the same id has new keys. Caches of the old project's keys must go.
 * - `signing-keys-changed`: a signing key was added or retired (rotation).
 *
 * Renaming a kind strands announcements in flight between versions: add, never rename.
 */
export interface Announcement {
  kind: 'project-deleted' | 'signing-keys-changed';
  project: ProjectId;
}

/**
 * What a listener hears: an announcement, or `missed` when this process may have missed some
 * (its subscription was down, or it fell behind the retained ones) — it must drop every cache
 * an announcement would have dropped.
 */
export type AnnouncementEvent = Announcement | { kind: 'missed' };

export type AnnouncementListener = (event: AnnouncementEvent) => void;

/**
 * A bus every process of a deployment listens to: standalone worker processes over one data
 * directory (SqliteAnnouncements), cluster replicas over Redis (RedisAnnouncements). Caches it
 * drops still have a lifetime of their own, which bounds staleness when the bus is down.
 */
export interface Announcements {
  /**
   * Tells every process, this one included. This process's listeners hear it before the
   * returned promise settles; the others within the bus's delivery bound (about 0.2 s for SQLite,
   * a round trip for Redis). Rejects when the bus cannot take it (the caller decides whether
   * that fails its request).
   */
  publish(announcement: Announcement): Promise<void>;
  /** Registers a listener; returns a function that removes it. */
  subscribe(listener: AnnouncementListener): () => void;
  /**
   * Hears, before returning, every announcement already made that this process has not heard,
   * where the bus can tell cheaply (SQLite: the file's change counter, a few µs). Called before
   * a cache is used, so that no request is answered from a cache another process already
   * dropped. A no-op for buses that deliver on their own (Redis).
   */
  catchUp(): void;
  close(): Promise<void>;
}

/** Listeners of one process, shared by the adapters. */
export class Listeners {
  private readonly set = new Set<AnnouncementListener>();

  add(listener: AnnouncementListener): () => void {
    this.set.add(listener);
    return () => this.set.delete(listener);
  }

  tell(event: AnnouncementEvent): void {
    for (const l of this.set) l(event);
  }
}

/** Checks a value read from the bus; anything else is dropped (a newer version's kind). */
export function asAnnouncement(kind: unknown, project: unknown): Announcement | null {
  if (kind !== 'project-deleted' && kind !== 'signing-keys-changed') return null;
  if (typeof project !== 'string' || project.length === 0) return null;
  return { kind, project: project as ProjectId };
}

/** One process alone (tests, a service without Redis nor a data dir): listeners hear it at once. */
export class LocalAnnouncements implements Announcements {
  private readonly listeners = new Listeners();

  async publish(announcement: Announcement): Promise<void> {
    this.listeners.tell(announcement);
  }

  subscribe(listener: AnnouncementListener): () => void {
    return this.listeners.add(listener);
  }

  catchUp(): void {}

  async close(): Promise<void> {}
}
