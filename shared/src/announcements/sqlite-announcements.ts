import type { SqliteDatabase } from '../sqlite';
import { asAnnouncement, Listeners, type Announcement, type AnnouncementListener, type Announcements } from './announcements';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS announcements (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, project TEXT NOT NULL, at INTEGER NOT NULL
);
`;

/** How long announcements are kept: a process that slept longer than this hears `missed`. */
const RETAIN_MS = 3_600_000;

/** Default time between two reads of the table. */
export const ANNOUNCEMENT_POLL_MS = 200;

/**
 * Announcements across the worker processes of one data directory (standalone): a row per
 * announcement in a small table of its own file, which every process reads every `pollMs`
 * (one primary-key range read: `seq > last`), and at once from `catchUp` when the file's change
 * counter (`PRAGMA data_version`, which moves when another connection commits) has moved. Each
 * process starts after the newest row (its caches start empty); a process that finds the rows
 * after its last one trimmed away hears `missed`. Rows older than an hour are deleted when a
 * new one is written.
 */
export class SqliteAnnouncements implements Announcements {
  private readonly listeners = new Listeners();
  private readonly timer: NodeJS.Timeout;
  private last: number;
  private readonly dataVersion;
  private version: number;

  constructor(
    private readonly db: SqliteDatabase,
    pollMs: number = ANNOUNCEMENT_POLL_MS,
    private readonly now: () => number = Date.now,
  ) {
    db.exec(SCHEMA);
    this.dataVersion = db.prepare('PRAGMA data_version').pluck();
    this.version = this.dataVersion.get() as number;
    this.last = this.newest();
    this.timer = setInterval(() => this.poll(), pollMs);
    this.timer.unref();
  }

  private newest(): number {
    return (this.db.prepare('SELECT max(seq) FROM announcements').pluck().get() as number | null) ?? 0;
  }

  async publish(a: Announcement): Promise<void> {
    const now = this.now();
    this.db.transaction(() => {
      this.db.prepare('INSERT INTO announcements (kind, project, at) VALUES (?, ?, ?)').run(a.kind, a.project, now);
      this.db.prepare('DELETE FROM announcements WHERE at < ?').run(now - RETAIN_MS);
    }).immediate();
    this.listeners.tell(a);
  }

  catchUp(): void {
    if (!this.db.open) return;
    const version = this.dataVersion.get() as number;
    if (version === this.version) return;
    this.version = version;
    this.poll();
  }

  /** Reads the announcements after the last one heard; public for tests that cannot wait. */
  poll(): void {
    if (!this.db.open) return;
    let rows: Array<{ seq: number; kind: string; project: string }>;
    try {
      rows = this.db.prepare('SELECT seq, kind, project FROM announcements WHERE seq > ? ORDER BY seq LIMIT 1000').all(this.last) as typeof rows;
    } catch {
      return; // A busy or failing disk: the next poll tries again; cache lifetimes still bound staleness.
    }
    if (rows.length > 0 && rows[0]!.seq > this.last + 1 && this.oldest() > this.last + 1) this.listeners.tell({ kind: 'missed' });
    for (const r of rows) {
      this.last = r.seq;
      const a = asAnnouncement(r.kind, r.project);
      if (a) this.listeners.tell(a);
    }
  }

  private oldest(): number {
    return (this.db.prepare('SELECT min(seq) FROM announcements').pluck().get() as number | null) ?? 0;
  }

  subscribe(listener: AnnouncementListener): () => void {
    return this.listeners.add(listener);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
  }
}
