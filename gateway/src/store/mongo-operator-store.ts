import type { Collection, Db, Filter } from 'mongodb';
import { ConflictError, ensureMongoIndex, loadMongodb, migrateMongo } from '@plinth/shared';
import type { OperatorSecrets } from '../operators/operator-secrets';
import { mongoOperatorMigrations, OPERATORS_COMPONENT } from './operator-data-version';
import type { AuditEntry, AuditQuery, OperatorPatch, OperatorRecord, OperatorSessionRecord, OperatorStore } from './operator-store';

type Doc<T extends { id: string }> = Omit<T, 'id'> & { _id: string };

const WRITE = { writeConcern: { w: 'majority' as const, wtimeoutMS: 10_000 } };

function fromDoc<T extends { id: string }>(d: Doc<T>): T {
  const { _id, ...rest } = d;
  return { id: _id, ...rest } as unknown as T;
}

function toDoc<T extends { id: string }>(r: T): Doc<T> {
  const { id, ...rest } = r;
  return { _id: id, ...rest } as unknown as Doc<T>;
}

const OPERATORS = 'gateway_operators';

/**
 * OperatorStore on MongoDB (cluster mode), beside MongoProjectStore's collections; `init()` brings
 * them to the operators' data version (operator-data-version.ts) before it creates the indexes.
 */
export class MongoOperatorStore implements OperatorStore {
  private readonly operators: Collection<Doc<OperatorRecord>>;
  private readonly sessions: Collection<Doc<OperatorSessionRecord>>;
  private readonly audit: Collection<Doc<AuditEntry>>;

  constructor(
    private readonly db: Db,
    readonly secrets: OperatorSecrets,
  ) {
    this.operators = db.collection(OPERATORS);
    this.sessions = db.collection('gateway_operator_sessions');
    this.audit = db.collection('gateway_audit_log');
  }

  async init(): Promise<void> {
    // Before the indexes: an older release must not rebuild the indexes of a newer one's data.
    await migrateMongo(this.db, { component: OPERATORS_COMPONENT, where: `MongoDB database "${this.db.databaseName}"`, migrations: mongoOperatorMigrations(this.secrets, OPERATORS) });
    await ensureMongoIndex(this.operators, { email: 1 }, { unique: true, name: 'email_unique' });
    await ensureMongoIndex(this.sessions, { token_hash: 1 }, { unique: true, name: 'token_unique' });
    await ensureMongoIndex(this.sessions, { operator_id: 1 }, { name: 'operator' });
    await ensureMongoIndex(this.audit, { at: 1 }, { name: 'at' });
  }

  async createOperator(op: OperatorRecord): Promise<void> {
    try {
      await this.operators.insertOne(toDoc(op), WRITE);
    } catch (err) {
      if (err instanceof loadMongodb().MongoServerError && err.code === 11000) throw new ConflictError(`An operator with e-mail ${op.email} already exists.`);
      throw err;
    }
  }

  async getOperator(id: string): Promise<OperatorRecord | null> {
    const d = await this.operators.findOne({ _id: String(id) });
    return d ? fromDoc<OperatorRecord>(d) : null;
  }

  async findOperatorByEmail(email: string): Promise<OperatorRecord | null> {
    const d = await this.operators.findOne({ email: String(email) });
    return d ? fromDoc<OperatorRecord>(d) : null;
  }

  async listOperators(): Promise<OperatorRecord[]> {
    return (await this.operators.find({}, { sort: { created_at: 1, _id: 1 } }).toArray()).map((d) => fromDoc(d));
  }

  async updateOperator(id: string, patch: OperatorPatch): Promise<boolean> {
    const set = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
    const r = await this.operators.updateOne({ _id: String(id) }, { $set: set }, WRITE);
    return r.matchedCount > 0;
  }

  async deleteOperator(id: string): Promise<boolean> {
    // Sessions first: an operator is never gone while a session of it still works.
    await this.sessions.deleteMany({ operator_id: String(id) }, WRITE);
    return (await this.operators.deleteOne({ _id: String(id) }, WRITE)).deletedCount > 0;
  }

  async createSession(s: OperatorSessionRecord): Promise<void> {
    await this.sessions.insertOne(toDoc(s), WRITE);
  }

  async findSessionByHash(tokenHash: string): Promise<OperatorSessionRecord | null> {
    const d = await this.sessions.findOne({ token_hash: String(tokenHash) });
    return d ? fromDoc<OperatorSessionRecord>(d) : null;
  }

  async listSessions(operatorId?: string): Promise<OperatorSessionRecord[]> {
    const filter = operatorId === undefined ? {} : { operator_id: String(operatorId) };
    return (await this.sessions.find(filter, { sort: { created_at: -1, _id: -1 } }).toArray()).map((d) => fromDoc(d));
  }

  async setSessionExpiry(id: string, expiresAt: string): Promise<boolean> {
    return (await this.sessions.updateOne({ _id: String(id) }, { $set: { expires_at: expiresAt } }, WRITE)).matchedCount > 0;
  }

  async deleteSession(id: string): Promise<boolean> {
    return (await this.sessions.deleteOne({ _id: String(id) }, WRITE)).deletedCount > 0;
  }

  async deleteSessionsOf(operatorId: string): Promise<number> {
    return (await this.sessions.deleteMany({ operator_id: String(operatorId) }, WRITE)).deletedCount;
  }

  async pruneSessions(now: string): Promise<number> {
    return (await this.sessions.deleteMany({ expires_at: { $lt: now } }, WRITE)).deletedCount;
  }

  async appendAudit(...entries: AuditEntry[]): Promise<void> {
    if (entries.length) await this.audit.insertMany(entries.map(toDoc), { ...WRITE, ordered: false });
  }

  async queryAudit(q: AuditQuery): Promise<AuditEntry[]> {
    const and: Filter<Doc<AuditEntry>>[] = [];
    if (q.actor !== undefined) and.push({ $or: [{ actor_id: q.actor }, { actor: q.actor }] });
    if (q.project !== undefined) and.push({ project: q.project });
    if (q.since !== undefined) and.push({ at: { $gte: q.since } });
    if (q.until !== undefined) and.push({ at: { $lt: q.until } });
    if (q.before !== undefined) and.push({ _id: { $lt: q.before } });
    const docs = await this.audit.find(and.length ? { $and: and } : {}, { sort: { _id: -1 }, limit: q.limit }).toArray();
    return docs.map((d) => fromDoc(d));
  }

  async pruneAudit(before: string): Promise<number> {
    return (await this.audit.deleteMany({ at: { $lt: before } }, WRITE)).deletedCount;
  }
}
