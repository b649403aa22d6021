import type { Statement } from 'better-sqlite3';
import { migrateSqlite, type ProjectId, type SqliteDatabase, type SqliteMigration, type WebhookEvent, type WebhookEventType } from '@plinth/shared';
import { WEBHOOKS_COMPONENT, type DeliveryStatus, type PendingDelivery, type StoredWebhook, type WebhookChanges, type WebhookDelivery, type WebhookStore } from './webhook-store';

/** The tables as they were before the webhooks' data version 1 (its baseline). */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS webhooks (
  project TEXT NOT NULL,
  id TEXT NOT NULL,
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  collections TEXT,
  secret TEXT NOT NULL,
  enabled INTEGER NOT NULL DEFAULT 1,
  disabled_reason TEXT,
  consecutive_failures INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (project, id)
);
CREATE TABLE IF NOT EXISTS webhook_deliveries (
  project TEXT NOT NULL,
  id TEXT NOT NULL,
  webhook TEXT NOT NULL,
  event_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'dead')),
  attempts INTEGER NOT NULL DEFAULT 0,
  last_status INTEGER,
  last_error TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (project, id)
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_by_hook ON webhook_deliveries (project, webhook, created_at);
CREATE INDEX IF NOT EXISTS webhook_deliveries_by_status ON webhook_deliveries (status, updated_at);
CREATE TABLE IF NOT EXISTS webhook_leases (
  name TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  until INTEGER NOT NULL
);
`;

interface HookRow {
  project: string;
  id: string;
  url: string;
  events: string;
  collections: string | null;
  secret: string;
  enabled: number;
  disabled_reason: string | null;
  consecutive_failures: number;
  created_at: string;
  updated_at: string;
  enabled_at: string | null;
}

const toHook = (r: HookRow): StoredWebhook => ({
  id: r.id,
  project: r.project as ProjectId,
  url: r.url,
  events: JSON.parse(r.events) as WebhookEventType[],
  collections: r.collections === null ? null : (JSON.parse(r.collections) as string[]),
  secret: r.secret,
  enabled: r.enabled === 1,
  disabled_reason: r.disabled_reason,
  consecutive_failures: r.consecutive_failures,
  created_at: r.created_at,
  updated_at: r.updated_at,
  enabled_at: r.enabled_at ?? r.created_at,
});

/** Migrations of webhooks.db (data-version.ts); only ever appended to. */
const MIGRATIONS: SqliteMigration[] = [
  {
    version: 1,
    name: 'deliveries keep their event (a job the queue lost is enqueued again from it)',
    up(db: SqliteDatabase) {
      const columns = db.prepare('PRAGMA table_info(webhook_deliveries)').all() as Array<{ name: string }>;
      if (!columns.some((c) => c.name === 'event')) db.exec('ALTER TABLE webhook_deliveries ADD COLUMN event TEXT');
    },
  },
  {
    version: 2,
    name: 'webhooks keep when they were last enabled (changes committed while disabled are not delivered)',
    up(db: SqliteDatabase) {
      db.exec('ALTER TABLE webhooks ADD COLUMN enabled_at TEXT');
      db.exec('UPDATE webhooks SET enabled_at = created_at');
    },
  },
];

/**
 * WebhookStore in SQLite: `${PLINTH_DATA_DIR}/webhooks.db`, a file of its own so a storm of
 * failing deliveries never holds the write lock record writes wait for. Its data version is the
 * `webhooks` component's, in the file's own `plinth_data_version` table.
 */
export class SqliteWebhookStore implements WebhookStore {
  private readonly statements = new Map<string, Statement>();

  /** `db`: a connection to webhooks.db (the caller owns it). Brings it to this release's data version. */
  constructor(private readonly db: SqliteDatabase) {
    migrateSqlite(db, { component: WEBHOOKS_COMPONENT, where: db.name, baseline: (d) => d.exec(SCHEMA), migrations: MIGRATIONS });
  }

  /** The statement of `sql`, prepared once. */
  private prepare(sql: string): Statement {
    let s = this.statements.get(sql);
    if (!s) this.statements.set(sql, (s = this.db.prepare(sql)));
    return s;
  }

  async insert(h: StoredWebhook): Promise<void> {
    this
      .prepare(
        `INSERT INTO webhooks (project, id, url, events, collections, secret, enabled, disabled_reason, consecutive_failures, created_at, updated_at, enabled_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(h.project, h.id, h.url, JSON.stringify(h.events), h.collections ? JSON.stringify(h.collections) : null, h.secret, h.enabled ? 1 : 0, h.disabled_reason, h.consecutive_failures, h.created_at, h.updated_at, h.enabled_at);
  }

  async list(project: ProjectId): Promise<StoredWebhook[]> {
    return (this.prepare('SELECT * FROM webhooks WHERE project = ? ORDER BY created_at, id').all(project) as HookRow[]).map(toHook);
  }

  async any(): Promise<boolean> {
    return this.prepare('SELECT 1 AS one FROM webhooks LIMIT 1').get() !== undefined;
  }

  async count(project: ProjectId): Promise<number> {
    return (this.prepare('SELECT COUNT(*) AS n FROM webhooks WHERE project = ?').get(project) as { n: number }).n;
  }

  async get(project: ProjectId, id: string): Promise<StoredWebhook | null> {
    return this.row(project, id);
  }

  private row(project: ProjectId, id: string): StoredWebhook | null {
    const row = this.prepare('SELECT * FROM webhooks WHERE project = ? AND id = ?').get(project, id) as HookRow | undefined;
    return row ? toHook(row) : null;
  }

  async update(project: ProjectId, id: string, c: WebhookChanges, now: string): Promise<StoredWebhook | null> {
    return this.db.transaction(() => {
      const current = this.row(project, id);
      if (!current) return null;
      const enabled = c.enabled ?? current.enabled;
      const reenabled = c.enabled === true && !current.enabled;
      this
        .prepare(
          `UPDATE webhooks SET url = ?, events = ?, collections = ?, enabled = ?, disabled_reason = ?, consecutive_failures = ?, updated_at = ?, enabled_at = ?
           WHERE project = ? AND id = ?`,
        )
        .run(
          c.url ?? current.url,
          JSON.stringify(c.events ?? current.events),
          c.collections === undefined ? (current.collections ? JSON.stringify(current.collections) : null) : c.collections ? JSON.stringify(c.collections) : null,
          enabled ? 1 : 0,
          enabled ? null : c.enabled === false ? 'disabled' : current.disabled_reason,
          reenabled ? 0 : current.consecutive_failures,
          now,
          reenabled ? now : current.enabled_at,
          project,
          id,
        );
      return this.row(project, id);
    })();
  }

  async delete(project: ProjectId, id: string): Promise<boolean> {
    return this.db.transaction(() => {
      this.prepare('DELETE FROM webhook_deliveries WHERE project = ? AND webhook = ?').run(project, id);
      return this.prepare('DELETE FROM webhooks WHERE project = ? AND id = ?').run(project, id).changes > 0;
    })();
  }

  async addDelivery(project: ProjectId, d: Pick<WebhookDelivery, 'id' | 'webhook' | 'event_id' | 'event_type'>, now: string, event?: WebhookEvent): Promise<DeliveryStatus> {
    this
      .prepare(
        `INSERT INTO webhook_deliveries (project, id, webhook, event_id, event_type, status, created_at, updated_at, event)
         VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?) ON CONFLICT (project, id) DO NOTHING`,
      )
      .run(project, d.id, d.webhook, d.event_id, d.event_type, now, now, event ? JSON.stringify(event) : null);
    const row = this.prepare('SELECT status FROM webhook_deliveries WHERE project = ? AND id = ?').get(project, d.id) as { status: DeliveryStatus } | undefined;
    return row?.status ?? 'pending';
  }

  async deliveryEvent(project: ProjectId, id: string): Promise<WebhookEvent | null> {
    const row = this.prepare('SELECT event FROM webhook_deliveries WHERE project = ? AND id = ?').get(project, id) as { event: string | null } | undefined;
    return row?.event ? (JSON.parse(row.event) as WebhookEvent) : null;
  }

  async pendingDeliveries(limit: number, after?: PendingDelivery): Promise<PendingDelivery[]> {
    const rows = (
      after
        ? this.prepare(
            `SELECT project, id, webhook, event, updated_at FROM webhook_deliveries
             WHERE status = 'pending' AND (updated_at, project, id) > (?, ?, ?) AND event IS NOT NULL
             ORDER BY updated_at, project, id LIMIT ?`,
          ).all(after.updated_at, after.project, after.id, limit)
        : this.prepare(
            `SELECT project, id, webhook, event, updated_at FROM webhook_deliveries
             WHERE status = 'pending' AND event IS NOT NULL ORDER BY updated_at, project, id LIMIT ?`,
          ).all(limit)
    ) as Array<{ project: string; id: string; webhook: string; event: string; updated_at: string }>;
    return rows.map((r) => ({ project: r.project as ProjectId, id: r.id, webhook: r.webhook, event: JSON.parse(r.event) as WebhookEvent, updated_at: r.updated_at }));
  }

  async listDeliveries(project: ProjectId, webhook: string, opts: { status?: DeliveryStatus; limit: number }): Promise<WebhookDelivery[]> {
    const byStatus = opts.status ? 'AND status = ?' : '';
    const args: unknown[] = [project, webhook, ...(opts.status ? [opts.status] : []), opts.limit];
    return this
      .prepare(
        `SELECT id, webhook, event_id, event_type, status, attempts, last_status, last_error, created_at, updated_at FROM webhook_deliveries
         WHERE project = ? AND webhook = ? ${byStatus} ORDER BY created_at DESC, rowid DESC LIMIT ?`,
      )
      .all(...args) as WebhookDelivery[];
  }

  async getDelivery(project: ProjectId, id: string): Promise<WebhookDelivery | null> {
    return (
      (this
        .prepare('SELECT id, webhook, event_id, event_type, status, attempts, last_status, last_error, created_at, updated_at FROM webhook_deliveries WHERE project = ? AND id = ?')
        .get(project, id) as WebhookDelivery | undefined) ?? null
    );
  }

  async setStatus(project: ProjectId, id: string, status: DeliveryStatus, now: string): Promise<void> {
    this.prepare('UPDATE webhook_deliveries SET status = ?, updated_at = ? WHERE project = ? AND id = ?').run(status, now, project, id);
  }

  async recordAttempt(project: ProjectId, id: string, o: { status: DeliveryStatus; last_status: number | null; last_error: string | null }, now: string): Promise<void> {
    this.db.transaction(() => {
      const row = this
        .prepare(
          `UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, last_status = ?, last_error = ?, updated_at = ?
           WHERE project = ? AND id = ? RETURNING webhook`,
        )
        .get(o.status, o.last_status, o.last_error, now, project, id) as { webhook: string } | undefined;
      if (row && o.status === 'delivered') {
        this.prepare('UPDATE webhooks SET consecutive_failures = 0 WHERE project = ? AND id = ? AND consecutive_failures > 0').run(project, row.webhook);
      }
    })();
  }

  async countFailure(project: ProjectId, webhook: string, disableAfter: number, now: string): Promise<boolean> {
    const before = this.row(project, webhook);
    if (!before) return false;
    const row = this
      .prepare(
        `UPDATE webhooks SET consecutive_failures = consecutive_failures + 1,
           enabled = CASE WHEN consecutive_failures + 1 >= ? THEN 0 ELSE enabled END,
           disabled_reason = CASE WHEN enabled = 1 AND consecutive_failures + 1 >= ? THEN 'consecutive_failures' ELSE disabled_reason END,
           updated_at = ?
         WHERE project = ? AND id = ? RETURNING enabled, disabled_reason, consecutive_failures`,
      )
      .get(disableAfter, disableAfter, now, project, webhook) as { enabled: number; disabled_reason: string | null; consecutive_failures: number } | undefined;
    return before.enabled && row !== undefined && row.enabled === 0;
  }

  async purgeProject(project: ProjectId): Promise<void> {
    this.db.transaction(() => {
      this.prepare('DELETE FROM webhook_deliveries WHERE project = ?').run(project);
      this.prepare('DELETE FROM webhooks WHERE project = ?').run(project);
    })();
  }

  async acquireLease(name: string, holder: string, now: number, ttlMs: number): Promise<boolean> {
    const row = this
      .prepare(
        `INSERT INTO webhook_leases (name, holder, until) VALUES (?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until = excluded.until
         WHERE webhook_leases.holder = excluded.holder OR webhook_leases.until < ?
         RETURNING holder`,
      )
      .get(name, holder, now + ttlMs, now) as { holder: string } | undefined;
    return row?.holder === holder;
  }

  async pruneDelivered(before: string, limit: number): Promise<number> {
    return this
      .prepare(`DELETE FROM webhook_deliveries WHERE rowid IN (SELECT rowid FROM webhook_deliveries WHERE status = 'delivered' AND updated_at < ? LIMIT ?)`)
      .run(before, limit).changes;
  }
}
