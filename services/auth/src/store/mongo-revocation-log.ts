import type { Collection, Db } from 'mongodb';
import { ensureMongoIndex, MONGO_MAJORITY, type ProjectId } from '@plinth/shared';
import type { RevocationLog, RevokedSession } from './revocation-log';

type RevokedDoc = { _id: string; project: string; sid: string; at: number };

const WRITE = { writeConcern: MONGO_MAJORITY };

/** RevocationLog in the UserStore's MongoDB (`auth_revocations`), majority writes. */
export class MongoRevocationLog implements RevocationLog {
  private constructor(private readonly docs: Collection<RevokedDoc>) {}

  static async open(db: Db): Promise<MongoRevocationLog> {
    const docs = db.collection<RevokedDoc>('auth_revocations');
    await ensureMongoIndex(docs, { at: 1, project: 1, sid: 1 }, { name: 'at_project_sid' });
    return new MongoRevocationLog(docs);
  }

  async record(entries: RevokedSession[]): Promise<void> {
    if (entries.length === 0) return;
    // One upsert per session (a user has a handful; a project purge writes them in a loop).
    await Promise.all(
      entries.map((e) =>
        this.docs.updateOne(
          { _id: `${e.project}:${e.sid}` },
          { $min: { at: e.at }, $setOnInsert: { project: e.project, sid: e.sid } },
          { upsert: true, ...WRITE },
        ),
      ),
    );
  }

  async since(since: number, limit: number, after?: RevokedSession): Promise<RevokedSession[]> {
    // `after` is the last entry of the previous page, so its time is at or after `since`.
    const filter = after
      ? {
          $or: [
            { at: { $gt: after.at } },
            { at: after.at, project: { $gt: after.project } },
            { at: after.at, project: after.project, sid: { $gt: after.sid } },
          ],
        }
      : { at: { $gte: since } };
    const docs = await this.docs.find(filter).sort({ at: 1, project: 1, sid: 1 }).limit(limit).toArray();
    return docs.map((d) => ({ project: d.project as ProjectId, sid: d.sid, at: d.at }));
  }

  async prune(before: number): Promise<void> {
    await this.docs.deleteMany({ at: { $lt: before } }, WRITE);
  }
}
