import type { Collection, Db, MongoServerError } from 'mongodb';
import { ensureMongoIndex, loadMongodb, type ProjectId } from '@plinth/shared';
import type { AuthSettings } from '../domain/auth-settings';
import type {
  OneTimeToken,
  OneTimeTokenKind,
  OtpIssue,
  SigningKeyRecord,
  UserListQuery,
  UserPatch,
  UserRecord,
  UserStore,
} from './user-store';
import { emailTakenError } from './user-store';

type UserDoc = UserRecord & { _id: string; project: string };
/** Expiry is a Date, so the TTL index removes expired tokens and codes. */
type TokenDoc = Omit<OneTimeToken, 'expires_at'> & { _id: string; project: string; expires_at: Date };
type OtpDoc = { _id?: string; project: string; email: string; code_hash: string; expires_at: Date; sent_at: number; attempts: number };
type KeyDoc = SigningKeyRecord & { _id: string; project: string };
type SettingsDoc = AuthSettings & { _id: string };
type MailSlotDoc = { _id?: string; project: string; key: string; sent_at: number };

const WRITE = { writeConcern: { w: 'majority' as const, wtimeoutMS: 10_000 } };
const EMAIL_INDEX = 'project_email';

function isDuplicateKey(err: unknown): err is MongoServerError {
  return err instanceof loadMongodb().MongoServerError && err.code === 11000;
}

/** "E-mail taken" only when the duplicate is on the e-mail index; any other duplicate is not the caller's doing. */
function emailTaken(err: unknown): never {
  if (isDuplicateKey(err) && (Object.hasOwn(err.keyPattern ?? {}, 'email') || err.message.includes(`index: ${EMAIL_INDEX}`))) {
    throw emailTakenError();
  }
  throw err;
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function toUser(d: UserDoc): UserRecord {
  const { _id, project: _project, ...user } = d;
  return { ...user, claims: user.claims ?? {} };
}

/** UserStore on MongoDB (cluster mode), official driver, majority writes. */
export class MongoUserStore implements UserStore {
  private readonly users: Collection<UserDoc>;
  private readonly tokens: Collection<TokenDoc>;
  private readonly otps: Collection<OtpDoc>;
  private readonly keys: Collection<KeyDoc>;
  private readonly settings: Collection<SettingsDoc>;
  private readonly mailSlots: Collection<MailSlotDoc>;

  private constructor(
    private readonly db: Db,
    private readonly onClose: () => Promise<void>,
  ) {
    this.users = db.collection<UserDoc>('auth_users', WRITE);
    this.tokens = db.collection<TokenDoc>('auth_one_time_tokens', WRITE);
    this.otps = db.collection<OtpDoc>('auth_otps', WRITE);
    this.keys = db.collection<KeyDoc>('auth_signing_keys', WRITE);
    this.settings = db.collection<SettingsDoc>('auth_settings', WRITE);
    this.mailSlots = db.collection<MailSlotDoc>('auth_mail_slots', WRITE);
  }

  /** Creates the indexes the guarantees rely on (unique e-mail per project, one OTP per e-mail). */
  static async open(db: Db, onClose: () => Promise<void> = async () => {}): Promise<MongoUserStore> {
    const store = new MongoUserStore(db, onClose);
    await ensureMongoIndex(store.users, { project: 1, email: 1 }, { name: EMAIL_INDEX, unique: true });
    await ensureMongoIndex(store.users, { project: 1, created_at: 1, id: 1 }, { name: 'project_created' });
    await ensureMongoIndex(store.tokens, { project: 1, token_hash: 1 }, { name: 'project_token', unique: true });
    await ensureMongoIndex(store.tokens, { expires_at: 1 }, { name: 'ttl', expireAfterSeconds: 0 });
    await ensureMongoIndex(store.otps, { project: 1, email: 1 }, { name: EMAIL_INDEX, unique: true });
    await ensureMongoIndex(store.otps, { expires_at: 1 }, { name: 'ttl', expireAfterSeconds: 0 });
    await ensureMongoIndex(store.keys, { project: 1, created_at: -1 }, { name: 'project_created' });
    await ensureMongoIndex(store.mailSlots, { project: 1, key: 1 }, { name: 'project_key', unique: true });
    return store;
  }

  async createUser(project: ProjectId, user: UserRecord): Promise<void> {
    try {
      await this.users.insertOne({ ...user, email: user.email.toLowerCase(), _id: `${project}/${user.id}`, project });
    } catch (err) {
      emailTaken(err);
    }
  }

  async getUser(project: ProjectId, id: string): Promise<UserRecord | null> {
    const d = await this.users.findOne({ _id: `${project}/${id}` });
    return d ? toUser(d) : null;
  }

  async getUserByEmail(project: ProjectId, email: string): Promise<UserRecord | null> {
    const d = await this.users.findOne({ project, email: email.toLowerCase() });
    return d ? toUser(d) : null;
  }

  async updateUser(project: ProjectId, id: string, patch: UserPatch): Promise<UserRecord | null> {
    const set: UserPatch = { ...patch };
    if (set.email !== undefined) set.email = set.email.toLowerCase();
    try {
      const d = await this.users.findOneAndUpdate({ _id: `${project}/${id}` }, { $set: set }, { returnDocument: 'after' });
      return d ? toUser(d) : null;
    } catch (err) {
      return emailTaken(err);
    }
  }

  async deleteUser(project: ProjectId, id: string): Promise<boolean> {
    const r = await this.users.deleteOne({ _id: `${project}/${id}` });
    await this.tokens.deleteMany({ project, user_id: id });
    return r.deletedCount > 0;
  }

  async listUsers(project: ProjectId, query: UserListQuery): Promise<{ users: UserRecord[]; total: number }> {
    const filter = query.search
      ? {
          project,
          $or: [
            { email: { $regex: escapeRegex(query.search), $options: 'i' } },
            { display_name: { $regex: escapeRegex(query.search), $options: 'i' } },
          ],
        }
      : { project };
    const [docs, total] = await Promise.all([
      this.users.find(filter).sort({ created_at: 1, id: 1 }).skip(query.offset).limit(query.limit).toArray(),
      this.users.countDocuments(filter),
    ]);
    return { users: docs.map(toUser), total };
  }

  async putOneTimeToken(project: ProjectId, token: OneTimeToken): Promise<void> {
    await this.tokens.insertOne({ ...token, expires_at: new Date(token.expires_at), _id: `${project}/${token.token_hash}`, project });
  }

  async consumeOneTimeToken(project: ProjectId, kind: OneTimeTokenKind, tokenHash: string, now: number): Promise<string | null> {
    return (await this.takeOneTimeToken(project, kind, tokenHash, now))?.user_id ?? null;
  }

  async takeOneTimeToken(project: ProjectId, kind: OneTimeTokenKind, tokenHash: string, now: number): Promise<OneTimeToken | null> {
    await this.tokens.deleteMany({ project, expires_at: { $lte: new Date(now) } });
    const d = await this.tokens.findOneAndDelete({ _id: `${project}/${tokenHash}`, kind, expires_at: { $gt: new Date(now) } });
    if (!d) return null;
    const { _id, project: _p, expires_at, ...token } = d;
    return { ...token, expires_at: expires_at.getTime() };
  }

  async deleteOneTimeTokens(project: ProjectId, userId: string, kinds: readonly OneTimeTokenKind[]): Promise<void> {
    await this.tokens.deleteMany({ project, user_id: userId, kind: { $in: [...kinds] } });
  }

  async deleteOtp(project: ProjectId, email: string): Promise<void> {
    await this.otps.deleteOne({ project, email: email.toLowerCase() });
  }

  async claimMailSlot(project: ProjectId, key: string, now: number, intervalMs: number): Promise<boolean> {
    try {
      await this.mailSlots.findOneAndUpdate(
        { project, key, sent_at: { $lte: now - intervalMs } },
        { $set: { sent_at: now } },
        { upsert: true },
      );
      return true;
    } catch (err) {
      // A recent send exists: the filter missed it and the upsert hit the unique index.
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  async issueOtp(project: ProjectId, otp: OtpIssue): Promise<boolean> {
    const email = otp.email.toLowerCase();
    try {
      await this.otps.findOneAndUpdate(
        { project, email, sent_at: { $lte: otp.resend_after } },
        { $set: { code_hash: otp.code_hash, expires_at: new Date(otp.expires_at), sent_at: otp.now, attempts: 0 } },
        { upsert: true },
      );
      return true;
    } catch (err) {
      // A recent code exists: the filter missed it and the upsert hit the unique index.
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  async redeemOtp(project: ProjectId, email: string, codeHash: string, now: number, maxAttempts: number): Promise<boolean> {
    const filter = { project, email: email.toLowerCase() };
    const d = await this.otps.findOneAndUpdate(
      { ...filter, expires_at: { $gt: new Date(now) }, attempts: { $lt: maxAttempts } },
      { $inc: { attempts: 1 } },
      { returnDocument: 'after' },
    );
    if (!d || d.code_hash !== codeHash) return false;
    const r = await this.otps.deleteOne({ ...filter, code_hash: codeHash, sent_at: d.sent_at });
    return r.deletedCount === 1;
  }

  async listSigningKeys(project: ProjectId): Promise<SigningKeyRecord[]> {
    const docs = await this.keys.find({ project }).sort({ created_at: -1, kid: -1 }).toArray();
    return docs.map(({ _id, project: _p, ...k }) => k);
  }

  async addSigningKey(project: ProjectId, key: SigningKeyRecord): Promise<void> {
    await this.keys.insertOne({ ...key, _id: `${project}/${key.kid}`, project });
  }

  async retireSigningKeys(project: ProjectId, keepKid: string, verifyUntil: number): Promise<void> {
    await this.keys.updateMany({ project, kid: { $ne: keepKid }, verify_until: null }, { $set: { verify_until: verifyUntil } });
  }

  async getSettings(project: ProjectId): Promise<AuthSettings | null> {
    const d = await this.settings.findOne({ _id: project });
    if (!d) return null;
    const { _id, ...settings } = d;
    return settings;
  }

  async putSettings(project: ProjectId, settings: AuthSettings): Promise<void> {
    await this.settings.updateOne({ _id: project }, { $set: settings }, { upsert: true });
  }

  async purgeProject(project: ProjectId): Promise<void> {
    await this.users.deleteMany({ project });
    await this.tokens.deleteMany({ project });
    await this.otps.deleteMany({ project });
    await this.keys.deleteMany({ project });
    await this.settings.deleteOne({ _id: project });
  }

  async ping(): Promise<void> {
    await this.db.command({ ping: 1 });
  }

  async close(): Promise<void> {
    await this.onClose();
  }
}
