import type { ClientSession, Collection, Db } from 'mongodb';
import { ensureMongoIndex, MONGO_MAJORITY, type ProjectId } from '@plinth/shared';
import type { FactorStore, MfaChallengeRecord, TotpFactor } from './factor-store';

type FactorDoc = TotpFactor & { _id: string; project: string };
/** Expiry is a Date, so the TTL index removes expired challenges. */
type ChallengeDoc = Omit<MfaChallengeRecord, 'expires_at'> & { _id: string; project: string; expires_at: Date; attempts: number };

const WRITE = { writeConcern: MONGO_MAJORITY };

function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 11000;
}

/** FactorStore on MongoDB (cluster mode): collections `auth_mfa_factors` and `auth_mfa_challenges`, majority writes. */
export class MongoFactorStore implements FactorStore {
  private readonly factors: Collection<FactorDoc>;
  private readonly challenges: Collection<ChallengeDoc>;

  private constructor(db: Db) {
    this.factors = db.collection<FactorDoc>('auth_mfa_factors', WRITE);
    this.challenges = db.collection<ChallengeDoc>('auth_mfa_challenges', WRITE);
  }

  static async open(db: Db): Promise<MongoFactorStore> {
    const store = new MongoFactorStore(db);
    await ensureMongoIndex(store.factors, { project: 1 }, { name: 'project' });
    await ensureMongoIndex(store.challenges, { project: 1, user_id: 1 }, { name: 'project_user' });
    await ensureMongoIndex(store.challenges, { expires_at: 1 }, { name: 'ttl', expireAfterSeconds: 0 });
    return store;
  }

  /** Deletes a user's factor and challenges, in the caller's transaction when given one (MongoUserStore.deleteUser). */
  async deleteOfUser(project: ProjectId, userId: string, session?: ClientSession): Promise<boolean> {
    await this.challenges.deleteMany({ project, user_id: userId }, { session });
    const r = await this.factors.deleteOne({ _id: `${project}/${userId}` }, { session });
    return r.deletedCount > 0;
  }

  /** Deletes every factor and challenge of the project (MongoUserStore.purgeProject). */
  async purgeProject(project: ProjectId): Promise<void> {
    await this.factors.deleteMany({ project });
    await this.challenges.deleteMany({ project });
  }

  async getFactor(project: ProjectId, userId: string): Promise<TotpFactor | null> {
    const d = await this.factors.findOne({ _id: `${project}/${userId}` });
    if (!d) return null;
    const { _id, project: _p, ...factor } = d;
    return factor;
  }

  async putPendingFactor(project: ProjectId, f: TotpFactor): Promise<boolean> {
    const doc = { ...f, project, status: 'pending' as const, confirmed_at: null, recovery_hashes: [] };
    try {
      // Matches only a pending factor (or none: the upsert); an active one makes the upsert hit the _id.
      await this.factors.findOneAndUpdate({ _id: `${project}/${f.user_id}`, status: 'pending' }, { $set: doc }, { upsert: true });
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  async activateFactor(project: ProjectId, userId: string, secretSealed: string, step: number, recoveryHashes: string[], now: number): Promise<boolean> {
    const r = await this.factors.updateOne(
      { _id: `${project}/${userId}`, status: 'pending', secret_sealed: secretSealed },
      { $set: { status: 'active', confirmed_at: now, last_step: step, recovery_hashes: recoveryHashes } },
    );
    return r.modifiedCount > 0;
  }

  async useStep(project: ProjectId, userId: string, step: number): Promise<boolean> {
    const r = await this.factors.updateOne({ _id: `${project}/${userId}`, status: 'active', last_step: { $lt: step } }, { $set: { last_step: step } });
    return r.modifiedCount > 0;
  }

  async useRecoveryCode(project: ProjectId, userId: string, hash: string): Promise<boolean> {
    const r = await this.factors.updateOne({ _id: `${project}/${userId}`, status: 'active', recovery_hashes: hash }, { $pull: { recovery_hashes: hash } });
    return r.modifiedCount > 0;
  }

  async deleteFactor(project: ProjectId, userId: string): Promise<boolean> {
    return this.deleteOfUser(project, userId);
  }

  async putChallenge(project: ProjectId, c: MfaChallengeRecord): Promise<void> {
    await this.challenges.insertOne({ ...c, expires_at: new Date(c.expires_at), attempts: 0, _id: `${project}/${c.hash}`, project });
  }

  async attemptChallenge(project: ProjectId, hash: string, now: number, maxAttempts: number): Promise<string | null> {
    const d = await this.challenges.findOneAndUpdate(
      { _id: `${project}/${hash}`, expires_at: { $gt: new Date(now) }, attempts: { $lt: maxAttempts } },
      { $inc: { attempts: 1 } },
      { returnDocument: 'after' },
    );
    return d?.user_id ?? null;
  }

  async takeChallenge(project: ProjectId, hash: string, now: number): Promise<string | null> {
    const d = await this.challenges.findOneAndDelete({ _id: `${project}/${hash}`, expires_at: { $gt: new Date(now) } });
    return d?.user_id ?? null;
  }
}
