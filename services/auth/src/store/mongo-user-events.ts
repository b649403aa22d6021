import type { ClientSession, Collection, Db } from 'mongodb';
import { ensureMongoIndex, MONGO_MAJORITY, type ProjectId, type WebhookEvent } from '@plinth/shared';
import type { OutboxUserEvent, UserEventOutbox } from './user-event-outbox';

/** One user event (user-event-outbox.ts); `_id` is the event id. `handed_at` null until the relay hands it over. */
interface EventDoc {
  _id: string;
  project: string;
  event: WebhookEvent;
  created_at: number;
  handed_at: number | null;
}

const WRITE = { writeConcern: MONGO_MAJORITY };

const toEvent = (d: EventDoc): OutboxUserEvent => ({ project: d.project as ProjectId, event: d.event });

/** The user events' outbox on MongoDB: `auth_user_events`, written in the user store's transactions. */
export class MongoUserEvents implements UserEventOutbox {
  readonly collection: Collection<EventDoc>;

  constructor(db: Db) {
    this.collection = db.collection<EventDoc>('auth_user_events', WRITE);
  }

  async ensureIndexes(): Promise<void> {
    await ensureMongoIndex(this.collection, { handed_at: 1, created_at: 1, _id: 1 }, { name: 'handed_created' });
  }

  /** Appends the event inside the caller's transaction (`session`). */
  async append(e: OutboxUserEvent, now: number, session: ClientSession): Promise<void> {
    await this.collection.insertOne({ _id: e.event.id, project: e.project, event: e.event, created_at: now, handed_at: null }, { session });
  }

  async pending(limit: number): Promise<OutboxUserEvent[]> {
    const docs = await this.collection.find({ handed_at: null }).sort({ created_at: 1, _id: 1 }).limit(limit).toArray();
    return docs.map(toEvent);
  }

  async markHanded(ids: readonly string[], now: number): Promise<void> {
    if (ids.length === 0) return;
    await this.collection.updateMany({ _id: { $in: [...ids] }, handed_at: null }, { $set: { handed_at: now } });
  }

  async handedAfter(afterId: string, limit: number): Promise<OutboxUserEvent[]> {
    const docs = await this.collection.find({ _id: { $gt: afterId }, handed_at: { $ne: null } }).sort({ _id: 1 }).limit(limit).toArray();
    return docs.map(toEvent);
  }

  async trim(before: number): Promise<number> {
    const r = await this.collection.deleteMany({ handed_at: { $ne: null, $lt: before } });
    return r.deletedCount;
  }
}
