import type { ClientSession, Collection, Db } from 'mongodb';
import { ensureMongoIndex, MONGO_MAJORITY, loadMongodb, type ProjectId } from '@plinth/shared';
import { identityTakenError, type IdentityRecord } from './user-store';

type IdentityDoc = IdentityRecord & { _id: string; project: string };

const WRITE = { writeConcern: MONGO_MAJORITY };

function toIdentity(d: IdentityDoc): IdentityRecord {
  const { _id, project: _project, ...identity } = d;
  return identity;
}

/** Linked provider accounts on MongoDB (MongoUserStore deletes them with the user and the project). */
export class MongoIdentities {
  readonly collection: Collection<IdentityDoc>;

  constructor(db: Db) {
    this.collection = db.collection<IdentityDoc>('auth_identities', WRITE);
  }

  /** `_id` is project/provider/subject (one user per provider account); this index keeps one identity per provider per user. */
  async ensureIndexes(): Promise<void> {
    await ensureMongoIndex(this.collection, { project: 1, user_id: 1, provider: 1 }, { name: 'project_user_provider', unique: true });
  }

  async link(project: ProjectId, identity: IdentityRecord): Promise<void> {
    try {
      await this.collection.insertOne({ ...identity, _id: `${project}/${identity.provider}/${identity.subject}`, project });
    } catch (err) {
      if (err instanceof loadMongodb().MongoServerError && err.code === 11000) throw identityTakenError();
      throw err;
    }
  }

  async get(project: ProjectId, provider: string, subject: string): Promise<IdentityRecord | null> {
    const d = await this.collection.findOne({ _id: `${project}/${provider}/${subject}` });
    return d ? toIdentity(d) : null;
  }

  async list(project: ProjectId, userId: string): Promise<IdentityRecord[]> {
    const docs = await this.collection.find({ project, user_id: userId }).sort({ created_at: 1, provider: 1 }).limit(100).toArray();
    return docs.map(toIdentity);
  }

  async unlink(project: ProjectId, userId: string, provider: string): Promise<boolean> {
    return (await this.collection.deleteOne({ project, user_id: userId, provider })).deletedCount > 0;
  }

  async deleteOfUser(project: ProjectId, userId: string, session: ClientSession): Promise<void> {
    await this.collection.deleteMany({ project, user_id: userId }, { session });
  }
}
