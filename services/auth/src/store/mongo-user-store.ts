import type { ClientSession, Collection, Db, MongoServerError, TransactionOptions } from 'mongodb';
import { ensureMongoIndex, inMongoTransaction, MONGO_MAJORITY, loadMongodb, migrateMongo, transactionOptions, UnavailableError, type ProjectId } from '@plinth/shared';
import type { AuthSettings } from '../domain/auth-settings';
import { MongoIdentities } from './mongo-identities';
import type {
  IdentityRecord,
  OneTimeToken,
  OneTimeTokenKind,
  OtpIssue,
  SigningKeyRecord,
  UserListQuery,
  UserPatch,
  UserRecord,
  UserStore,
} from './user-store';
import { emailTakenError, foldCase, mailSlotKey, ONE_TIME_TOKEN_KINDS } from './user-store';
import { AUTH_MONGO_MIGRATIONS } from './auth-migrations';
import { MongoFactorStore } from './mongo-factor-store';
import { MongoUserEvents } from './mongo-user-events';
import { MongoMailOutbox } from './mongo-mail-outbox';
import { userEvent } from './user-event';

/** `name_folded`: foldCase(display_name), what a search matches (regex case folding differs from SQLite's). */
type UserDoc = UserRecord & { _id: string; project: string; name_folded?: string | null };
/** Expiry is a Date, so the TTL index removes expired tokens and codes. */
type TokenDoc = Omit<OneTimeToken, 'expires_at'> & { _id: string; project: string; expires_at: Date };
type OtpDoc = { _id?: string; project: string; email: string; code_hash: string; expires_at: Date; sent_at: number; attempts: number };
type KeyDoc = SigningKeyRecord & { _id: string; project: string };
type SettingsDoc = AuthSettings & { _id: string };
type MailSlotDoc = { _id?: string; project: string; key: string; sent_at: number };

const WRITE = { writeConcern: MONGO_MAJORITY };
const EMAIL_INDEX = 'project_email';

export interface MongoUserStoreOptions {
  /** maxCommitTimeMS of the store's transactions (deleteUser). Default 5000. */
  commitTimeoutMs?: number;
  /** Server-side time limit (maxTimeMS) of a user search; over it the request is a 503. Default 5000. */
  searchTimeMs?: number;
}

/** The stored form of a user: the e-mail and the searched name folded. */
function userDoc(project: ProjectId, user: UserRecord): UserDoc {
  return { ...user, email: user.email === null ? null : foldCase(user.email), name_folded: user.display_name == null ? null : foldCase(user.display_name), _id: `${project}/${user.id}`, project };
}

function isTimeLimit(err: unknown): boolean {
  return err instanceof loadMongodb().MongoServerError && err.code === 50;
}

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
  const { _id, project: _project, name_folded: _folded, ...user } = d;
  // Users stored before anonymous users existed have no is_anonymous.
  return { ...user, is_anonymous: user.is_anonymous ?? false, claims: user.claims ?? {} };
}

/** UserStore on MongoDB (cluster mode), official driver, majority writes. */
export class MongoUserStore implements UserStore {
  private readonly users: Collection<UserDoc>;
  private readonly tokens: Collection<TokenDoc>;
  private readonly otps: Collection<OtpDoc>;
  private readonly keys: Collection<KeyDoc>;
  private readonly settings: Collection<SettingsDoc>;
  private readonly mailSlots: Collection<MailSlotDoc>;
  private readonly identities: MongoIdentities;
  readonly events: MongoUserEvents;
  readonly mails: MongoMailOutbox;
  private readonly transactionOptions: TransactionOptions;
  private readonly searchTimeMs: number;

  private constructor(
    private readonly db: Db,
    private readonly onClose: () => Promise<void>,
    options: MongoUserStoreOptions,
    readonly factors: MongoFactorStore,
  ) {
    this.transactionOptions = transactionOptions(options.commitTimeoutMs, WRITE.writeConcern);
    this.searchTimeMs = options.searchTimeMs ?? 5_000;
    this.users = db.collection<UserDoc>('auth_users', WRITE);
    this.tokens = db.collection<TokenDoc>('auth_one_time_tokens', WRITE);
    this.otps = db.collection<OtpDoc>('auth_otps', WRITE);
    this.keys = db.collection<KeyDoc>('auth_signing_keys', WRITE);
    this.settings = db.collection<SettingsDoc>('auth_settings', WRITE);
    this.mailSlots = db.collection<MailSlotDoc>('auth_mail_slots', WRITE);
    this.identities = new MongoIdentities(db);
    this.events = new MongoUserEvents(db);
    this.mails = new MongoMailOutbox(db);
  }

  /** Creates the indexes the guarantees rely on (unique e-mail per project, one OTP per e-mail). */
  static async open(db: Db, onClose: () => Promise<void> = async () => {}, options: MongoUserStoreOptions = {}): Promise<MongoUserStore> {
    // Before the indexes: an older release must not rebuild the indexes of a newer one's data.
    await migrateMongo(db, { component: 'auth', where: `MongoDB database "${db.databaseName}"`, migrations: AUTH_MONGO_MIGRATIONS });
    const store = new MongoUserStore(db, onClose, options, await MongoFactorStore.open(db));
    // Partial: anonymous users have no e-mail (null), and any number of them may exist.
    await ensureMongoIndex(store.users, { project: 1, email: 1 }, { name: EMAIL_INDEX, unique: true, partialFilterExpression: { email: { $type: 'string' } } });
    await ensureMongoIndex(store.users, { last_sign_in_at: 1 }, { name: 'anonymous_idle', partialFilterExpression: { is_anonymous: true } });
    await ensureMongoIndex(store.users, { project: 1, created_at: 1, id: 1 }, { name: 'project_created' });
    await ensureMongoIndex(store.tokens, { project: 1, token_hash: 1 }, { name: 'project_token', unique: true });
    await ensureMongoIndex(store.tokens, { expires_at: 1 }, { name: 'ttl', expireAfterSeconds: 0 });
    // deleteUser and deleteOneTimeTokens find a user's tokens through it.
    await ensureMongoIndex(store.tokens, { project: 1, user_id: 1 }, { name: 'project_user' });
    await ensureMongoIndex(store.otps, { project: 1, email: 1 }, { name: EMAIL_INDEX, unique: true });
    await ensureMongoIndex(store.otps, { expires_at: 1 }, { name: 'ttl', expireAfterSeconds: 0 });
    await ensureMongoIndex(store.keys, { project: 1, created_at: -1 }, { name: 'project_created' });
    await ensureMongoIndex(store.mailSlots, { project: 1, key: 1 }, { name: 'project_key', unique: true });
    await store.identities.ensureIndexes();
    await store.events.ensureIndexes();
    await store.mails.ensureIndexes();
    return store;
  }

  private transaction<T>(fn: (session: ClientSession) => Promise<T>): Promise<T> {
    return inMongoTransaction(this.db.client, this.transactionOptions, fn);
  }

  async createUser(project: ProjectId, user: UserRecord): Promise<void> {
    try {
      // The user and its event commit together (docs/webhooks.md "User events").
      await this.transaction(async (session) => {
        await this.users.insertOne(userDoc(project, user), { session });
        const now = Date.now();
        await this.events.append(userEvent(project, 'user.created', user, now), now, session);
      });
    } catch (err) {
      emailTaken(err);
    }
  }

  async getUser(project: ProjectId, id: string): Promise<UserRecord | null> {
    const d = await this.users.findOne({ _id: `${project}/${id}` });
    return d ? toUser(d) : null;
  }

  async getUserByEmail(project: ProjectId, email: string): Promise<UserRecord | null> {
    const d = await this.users.findOne({ project, email: foldCase(email) });
    return d ? toUser(d) : null;
  }

  async updateUser(project: ProjectId, id: string, patch: UserPatch): Promise<UserRecord | null> {
    const set: UserPatch & { name_folded?: string | null } = { ...patch };
    if (set.email !== undefined && set.email !== null) set.email = foldCase(set.email);
    if (set.display_name !== undefined) set.name_folded = set.display_name === null ? null : foldCase(set.display_name);
    try {
      const d = await this.users.findOneAndUpdate({ _id: `${project}/${id}` }, { $set: set }, { returnDocument: 'after' });
      return d ? toUser(d) : null;
    } catch (err) {
      return emailTaken(err);
    }
  }

  async deleteUser(project: ProjectId, id: string): Promise<boolean> {
    const slots = ONE_TIME_TOKEN_KINDS.map((kind) => mailSlotKey(kind, id));
    return this.transaction(async (session) => {
      const gone = await this.users.findOneAndDelete({ _id: `${project}/${id}` }, { session });
      await this.tokens.deleteMany({ project, user_id: id }, { session });
      await this.identities.deleteOfUser(project, id, session);
      await this.mailSlots.deleteMany({ project, key: { $in: slots } }, { session });
      await this.factors.deleteOfUser(project, id, session);
      if (!gone) return false;
      const now = Date.now();
      await this.events.append(userEvent(project, 'user.deleted', toUser(gone), now), now, session);
      return true;
    });
  }

  async listUsers(project: ProjectId, query: UserListQuery): Promise<{ users: UserRecord[]; total: number }> {
    const folded = query.search ? escapeRegex(foldCase(query.search)) : null;
    const searched = folded ? { project, $or: [{ email: { $regex: folded } }, { name_folded: { $regex: folded } }] } : { project };
    // Users stored before anonymous users existed have no is_anonymous: they are not anonymous.
    const anonymous = query.anonymous === undefined ? {} : { is_anonymous: query.anonymous ? true : { $ne: true } };
    const filter = { ...searched, ...anonymous };
    try {
      const [docs, total] = await Promise.all([
        this.users.find(filter).sort({ created_at: 1, id: 1 }).skip(query.offset).limit(query.limit).maxTimeMS(this.searchTimeMs).toArray(),
        this.users.countDocuments(filter, { maxTimeMS: this.searchTimeMs }),
      ]);
      return { users: docs.map(toUser), total };
    } catch (err) {
      if (isTimeLimit(err)) throw new UnavailableError(`The user search ran longer than ${this.searchTimeMs} ms and was stopped; search for a longer part of the e-mail or name.`);
      throw err;
    }
  }

  async deleteIdleAnonymousUsers(idleBefore: string): Promise<number> {
    // The server deletes (through the partial index); anonymous users have no tokens, mail slots or factors to delete.
    const r = await this.users.deleteMany({ is_anonymous: true, last_sign_in_at: { $lt: idleBefore } });
    return r.deletedCount;
  }

  async putOneTimeToken(project: ProjectId, token: OneTimeToken): Promise<void> {
    await this.tokens.insertOne({ ...token, expires_at: new Date(token.expires_at), _id: `${project}/${token.token_hash}`, project });
  }

  async consumeOneTimeToken(project: ProjectId, kind: OneTimeTokenKind, tokenHash: string, now: number): Promise<string | null> {
    return (await this.takeOneTimeToken(project, kind, tokenHash, now))?.user_id ?? null;
  }

  async takeOneTimeToken(project: ProjectId, kind: OneTimeTokenKind, tokenHash: string, now: number): Promise<OneTimeToken | null> {
    // Expired tokens are left to the TTL index; the filter ignores them until it runs.
    const d = await this.tokens.findOneAndDelete({ _id: `${project}/${tokenHash}`, kind, expires_at: { $gt: new Date(now) } });
    if (!d) return null;
    const { _id, project: _p, expires_at, ...token } = d;
    return { ...token, expires_at: expires_at.getTime() };
  }

  async linkIdentity(project: ProjectId, identity: IdentityRecord): Promise<void> {
    await this.identities.link(project, identity);
  }

  async getIdentity(project: ProjectId, provider: string, subject: string): Promise<IdentityRecord | null> {
    return this.identities.get(project, provider, subject);
  }

  async listIdentities(project: ProjectId, userId: string): Promise<IdentityRecord[]> {
    return this.identities.list(project, userId);
  }

  async unlinkIdentity(project: ProjectId, userId: string, provider: string): Promise<boolean> {
    return this.identities.unlink(project, userId, provider);
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
    await this.identities.collection.deleteMany({ project });
    await this.tokens.deleteMany({ project });
    await this.otps.deleteMany({ project });
    await this.keys.deleteMany({ project });
    await this.mailSlots.deleteMany({ project });
    await this.factors.purgeProject(project);
    await this.events.collection.deleteMany({ project });
    await this.mails.collection.deleteMany({ project });
    await this.settings.deleteOne({ _id: project });
  }

  async ping(): Promise<void> {
    await this.db.command({ ping: 1 });
  }

  async close(): Promise<void> {
    await this.onClose();
  }
}
