import type { Collection, Db } from 'mongodb';
import { migrateMongo, MONGO_MAJORITY, type MongoMigration, type ProjectId, type WebhookEvent } from '@plinth/shared';
import { WEBHOOKS_COMPONENT, type DeliveryStatus, type PendingDelivery, type StoredWebhook, type WebhookChanges, type WebhookDelivery, type WebhookStore } from './webhook-store';

export const MONGO_WEBHOOKS = 'plinth_webhooks';
export const MONGO_WEBHOOK_DELIVERIES = 'plinth_webhook_deliveries';
export const MONGO_WEBHOOK_LEASES = 'plinth_webhook_leases';

interface HookDocument extends Omit<StoredWebhook, 'project' | 'enabled_at'> {
  /** `<project>/<id>`. */
  _id: string;
  project: string;
  /** Absent on webhooks stored before it was kept: their `created_at` stands for it. */
  enabled_at?: string;
}

interface DeliveryDocument extends WebhookDelivery {
  /** `<project>/<id>`. */
  _id: string;
  project: string;
  /** Insertion order among deliveries of the same `created_at` (newest first on ties). */
  order: number;
  /** The event it carries (absent on deliveries stored before it was kept). */
  event?: WebhookEvent;
}

interface LeaseDocument {
  _id: string;
  holder: string;
  until: number;
}

const key = (project: string, id: string): string => `${project}/${id}`;
/** E11000 duplicate key. By its code, not its class: this module loads no driver code, so a standalone server never loads the driver. */
const isDuplicate = (err: unknown): boolean => typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 11000;

const toHook = ({ _id, project, enabled_at, ...h }: HookDocument): StoredWebhook => ({ ...h, project: project as ProjectId, enabled_at: enabled_at ?? h.created_at });
const toDelivery = ({ _id, project, order, event, ...d }: DeliveryDocument): WebhookDelivery => d;

/** Migrations of the webhook collections (data-version.ts): none yet; only ever appended to. */
const MIGRATIONS: MongoMigration[] = [];

/** Attempts at an update read-modify-write before giving up (another writer kept changing the webhook). */
const UPDATE_ATTEMPTS = 10;

/**
 * WebhookStore on the records' MongoDB database (records on MongoDB, MONGO_URL): webhooks in
 * `plinth_webhooks`, deliveries in `plinth_webhook_deliveries` (each `_id` is `<project>/<id>`),
 * the dispatch lease in `plinth_webhook_leases`, all written with majority acknowledgement. Each
 * change is one atomic single-document operation (compare-and-set where it depends on what is
 * there), so no transaction is needed.
 */
export class MongoWebhookStore implements WebhookStore {
  private readonly hooks: Collection<HookDocument>;
  private readonly deliveries: Collection<DeliveryDocument>;
  private readonly leases: Collection<LeaseDocument>;
  private lastOrder = 0;

  constructor(private readonly db: Db) {
    this.hooks = db.collection<HookDocument>(MONGO_WEBHOOKS, { writeConcern: MONGO_MAJORITY });
    this.deliveries = db.collection<DeliveryDocument>(MONGO_WEBHOOK_DELIVERIES, { writeConcern: MONGO_MAJORITY });
    this.leases = db.collection<LeaseDocument>(MONGO_WEBHOOK_LEASES, { writeConcern: MONGO_MAJORITY });
  }

  /** Brings the collections to this release's data version (the `webhooks` component), then creates the indexes (idempotent). */
  async init(): Promise<void> {
    // Before the indexes: an older release must not rebuild the indexes of a newer one's data.
    await migrateMongo(this.db, { component: WEBHOOKS_COMPONENT, where: `MongoDB database "${this.db.databaseName}"`, migrations: MIGRATIONS });
    await this.hooks.createIndex({ project: 1, created_at: 1, id: 1 }, { name: 'by_project' });
    await this.deliveries.createIndex({ project: 1, webhook: 1, created_at: -1, order: -1 }, { name: 'by_hook' });
    await this.deliveries.createIndex({ status: 1, updated_at: 1 }, { name: 'by_status' });
  }

  /** Strictly increasing in this process: ties of `created_at` list the later insert first. */
  private nextOrder(): number {
    this.lastOrder = Math.max(this.lastOrder + 1, Date.now() * 1000);
    return this.lastOrder;
  }

  async insert(h: StoredWebhook): Promise<void> {
    await this.hooks.insertOne({ ...h, _id: key(h.project, h.id) });
  }

  async list(project: ProjectId): Promise<StoredWebhook[]> {
    return (await this.hooks.find({ project }).sort({ created_at: 1, id: 1 }).toArray()).map(toHook);
  }

  async any(): Promise<boolean> {
    return (await this.hooks.findOne({}, { projection: { _id: 1 } })) !== null;
  }

  async count(project: ProjectId): Promise<number> {
    return this.hooks.countDocuments({ project });
  }

  async get(project: ProjectId, id: string): Promise<StoredWebhook | null> {
    const doc = await this.hooks.findOne({ _id: key(project, id) });
    return doc ? toHook(doc) : null;
  }

  async update(project: ProjectId, id: string, c: WebhookChanges, now: string): Promise<StoredWebhook | null> {
    for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
      const current = await this.get(project, id);
      if (!current) return null;
      const enabled = c.enabled ?? current.enabled;
      const reenabled = c.enabled === true && !current.enabled;
      const set = {
        url: c.url ?? current.url,
        events: c.events ?? current.events,
        collections: c.collections === undefined ? current.collections : c.collections,
        enabled,
        disabled_reason: enabled ? null : c.enabled === false ? 'disabled' : current.disabled_reason,
        consecutive_failures: reenabled ? 0 : current.consecutive_failures,
        updated_at: now,
        enabled_at: reenabled ? now : current.enabled_at,
      };
      // Compare-and-set on what the change was computed from (a failure counted meanwhile retries).
      const after = await this.hooks.findOneAndUpdate(
        { _id: key(project, id), enabled: current.enabled, consecutive_failures: current.consecutive_failures, updated_at: current.updated_at },
        { $set: set },
        { returnDocument: 'after' },
      );
      if (after) return toHook(after);
    }
    throw new Error(`webhook ${id}: changed by others ${UPDATE_ATTEMPTS} times in a row; not updated`);
  }

  async delete(project: ProjectId, id: string): Promise<boolean> {
    const { deletedCount } = await this.hooks.deleteOne({ _id: key(project, id) });
    await this.deliveries.deleteMany({ project, webhook: id });
    return deletedCount > 0;
  }

  async addDelivery(project: ProjectId, d: Pick<WebhookDelivery, 'id' | 'webhook' | 'event_id' | 'event_type'>, now: string, event?: WebhookEvent): Promise<DeliveryStatus> {
    const doc: Omit<DeliveryDocument, '_id'> = {
      project,
      id: d.id,
      webhook: d.webhook,
      event_id: d.event_id,
      event_type: d.event_type,
      status: 'pending',
      attempts: 0,
      last_status: null,
      last_error: null,
      created_at: now,
      updated_at: now,
      order: this.nextOrder(),
      ...(event ? { event } : {}),
    };
    try {
      const stored = await this.deliveries.findOneAndUpdate({ _id: key(project, d.id) }, { $setOnInsert: doc }, { upsert: true, returnDocument: 'after', projection: { status: 1 } });
      return stored?.status ?? 'pending';
    } catch (err) {
      // Two upserts of the same delivery at once: the other one inserted it.
      if (!isDuplicate(err)) throw err;
      return (await this.deliveries.findOne({ _id: key(project, d.id) }, { projection: { status: 1 } }))?.status ?? 'pending';
    }
  }

  async listDeliveries(project: ProjectId, webhook: string, opts: { status?: DeliveryStatus; limit: number }): Promise<WebhookDelivery[]> {
    const filter = opts.status ? { project, webhook, status: opts.status } : { project, webhook };
    return (await this.deliveries.find(filter).sort({ created_at: -1, order: -1 }).limit(opts.limit).toArray()).map(toDelivery);
  }

  async deliveryEvent(project: ProjectId, id: string): Promise<WebhookEvent | null> {
    const doc = await this.deliveries.findOne({ _id: key(project, id) }, { projection: { event: 1 } });
    return doc?.event ?? null;
  }

  async pendingDeliveries(limit: number, after?: PendingDelivery): Promise<PendingDelivery[]> {
    // `after` is the last of the previous page.
    const next = after
      ? {
          $or: [
            { updated_at: { $gt: after.updated_at } },
            { updated_at: after.updated_at, project: { $gt: after.project } },
            { updated_at: after.updated_at, project: after.project, id: { $gt: after.id } },
          ],
        }
      : {};
    const docs = await this.deliveries
      .find({ status: 'pending', event: { $exists: true }, ...next })
      .sort({ updated_at: 1, project: 1, id: 1 })
      .limit(limit)
      .toArray();
    return docs.map((d) => ({ project: d.project as ProjectId, id: d.id, webhook: d.webhook, event: d.event!, updated_at: d.updated_at }));
  }

  async getDelivery(project: ProjectId, id: string): Promise<WebhookDelivery | null> {
    const doc = await this.deliveries.findOne({ _id: key(project, id) });
    return doc ? toDelivery(doc) : null;
  }

  async setStatus(project: ProjectId, id: string, status: DeliveryStatus, now: string): Promise<void> {
    await this.deliveries.updateOne({ _id: key(project, id) }, { $set: { status, updated_at: now } });
  }

  async recordAttempt(project: ProjectId, id: string, o: { status: DeliveryStatus; last_status: number | null; last_error: string | null }, now: string): Promise<void> {
    const after = await this.deliveries.findOneAndUpdate(
      { _id: key(project, id) },
      { $set: { status: o.status, last_status: o.last_status, last_error: o.last_error, updated_at: now }, $inc: { attempts: 1 } },
      { returnDocument: 'after' },
    );
    if (after && o.status === 'delivered') {
      await this.hooks.updateOne({ _id: key(project, after.webhook), consecutive_failures: { $gt: 0 } }, { $set: { consecutive_failures: 0 } });
    }
  }

  async countFailure(project: ProjectId, webhook: string, disableAfter: number, now: string): Promise<boolean> {
    const after = await this.hooks.findOneAndUpdate({ _id: key(project, webhook) }, { $inc: { consecutive_failures: 1 }, $set: { updated_at: now } }, { returnDocument: 'after' });
    if (!after || after.consecutive_failures < disableAfter) return false;
    // Only the call that flips it from enabled says it disabled it.
    const { modifiedCount } = await this.hooks.updateOne({ _id: key(project, webhook), enabled: true }, { $set: { enabled: false, disabled_reason: 'consecutive_failures' } });
    return modifiedCount === 1;
  }

  async purgeProject(project: ProjectId): Promise<void> {
    await this.hooks.deleteMany({ project });
    await this.deliveries.deleteMany({ project });
  }

  async acquireLease(name: string, holder: string, now: number, ttlMs: number): Promise<boolean> {
    try {
      // Renewed when its own, taken when lapsed; absent: inserted. Held by another: the upsert
      // collides with it on `_id` (no lease).
      const after = await this.leases.findOneAndUpdate(
        { _id: name, $or: [{ holder }, { until: { $lt: now } }] },
        { $set: { holder, until: now + ttlMs } },
        { upsert: true, returnDocument: 'after' },
      );
      return after?.holder === holder;
    } catch (err) {
      if (isDuplicate(err)) return false;
      throw err;
    }
  }

  async pruneDelivered(before: string, limit: number): Promise<number> {
    const ids = (await this.deliveries.find({ status: 'delivered', updated_at: { $lt: before } }, { projection: { _id: 1 } }).limit(limit).toArray()).map((d) => d._id);
    if (ids.length === 0) return 0;
    return (await this.deliveries.deleteMany({ _id: { $in: ids }, status: 'delivered' })).deletedCount;
  }
}
