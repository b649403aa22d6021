import type { Collection, Db } from 'mongodb';
import { ensureMongoIndex, MONGO_MAJORITY, type ProjectId } from '@plinth/shared';
import type { MailOutboxStore, StoredMail } from './mail-outbox-store';

/** One mail (mail-outbox-store.ts); `_id` is the mail job's id. */
interface MailDoc {
  _id: string;
  project: string;
  sealed: string;
  created_at: number;
}

const WRITE = { writeConcern: MONGO_MAJORITY };

const toMail = (d: MailDoc): StoredMail => ({ id: d._id, project: d.project as ProjectId, sealed: d.sealed, created_at: d.created_at });

/** The mail outbox on MongoDB: `auth_mail_outbox`, written with majority acknowledgement before the job is enqueued. */
export class MongoMailOutbox implements MailOutboxStore {
  readonly collection: Collection<MailDoc>;

  constructor(db: Db) {
    this.collection = db.collection<MailDoc>('auth_mail_outbox', WRITE);
  }

  async ensureIndexes(): Promise<void> {
    await ensureMongoIndex(this.collection, { created_at: 1 }, { name: 'created' });
  }

  async add(mail: StoredMail): Promise<void> {
    await this.collection.updateOne(
      { _id: mail.id },
      { $setOnInsert: { project: mail.project, sealed: mail.sealed, created_at: mail.created_at } },
      { upsert: true },
    );
  }

  async after(afterId: string, limit: number): Promise<StoredMail[]> {
    const docs = await this.collection.find({ _id: { $gt: afterId } }).sort({ _id: 1 }).limit(limit).toArray();
    return docs.map(toMail);
  }

  async remove(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.collection.deleteMany({ _id: { $in: [...ids] } });
  }

  async trim(before: number): Promise<number> {
    return (await this.collection.deleteMany({ created_at: { $lt: before } })).deletedCount;
  }
}
