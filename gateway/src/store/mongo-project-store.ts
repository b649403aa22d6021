import type { ClientSession, Collection, Db, MongoServerError, TransactionOptions } from 'mongodb';
import { ConflictError, ensureMongoIndex, inMongoTransaction, loadMongodb, migrateMongo, transactionOptions, type ProjectId } from '@plinth/shared';
import { OperatorSecrets } from '../operators/operator-secrets';
import { MongoOperatorStore } from './mongo-operator-store';
import { purgingError, type ApiKeyRecord, type ProjectRecord, type ProjectStore } from './project-store';

interface ProjectDoc {
  _id: string;
  name: string;
  created_at: string;
}
/** The tombstone of a deleted project whose purge has not finished. */
interface PurgeDoc {
  _id: string;
  deleted_at: string;
}
interface KeyDoc {
  _id: string;
  project: string;
  kind: ApiKeyRecord['kind'];
  hash: string;
  prefix: string;
  created_at: string;
}

const WRITE = { writeConcern: { w: 'majority' as const, wtimeoutMS: 10_000 } };

function isDuplicateKey(err: unknown): boolean {
  return err instanceof loadMongodb().MongoServerError && err.code === 11000;
}

const toProject = (d: ProjectDoc): ProjectRecord => ({ id: d._id as ProjectId, name: d.name, created_at: d.created_at });
const toKey = (d: KeyDoc): ApiKeyRecord => ({
  id: d._id,
  project: d.project as ProjectId,
  kind: d.kind,
  hash: d.hash,
  prefix: d.prefix,
  created_at: d.created_at,
});

/**
 * ProjectStore on MongoDB (cluster mode). Call `init()` once to create indexes.
 * Deleting a project and adding a key are transactions (so a replica set is required) that both
 * write the project document: of a deletion and a key addition racing, one sees the other's
 * result, and no key outlives its project. A key is only ever found while its project exists.
 */
export class MongoProjectStore implements ProjectStore {
  private readonly projects: Collection<ProjectDoc>;
  private readonly keys: Collection<KeyDoc>;
  private readonly purges: Collection<PurgeDoc>;
  private readonly transactionOptions: TransactionOptions;
  readonly operators: MongoOperatorStore;

  private readonly onClose: () => Promise<void>;

  /**
   * `internalSecret`: the deployment's PLINTH_INTERNAL_SECRET (the key sealing operators' TOTP
   * secrets derives from it); `commitTimeoutMs`: maxCommitTimeMS of every transaction (default
   * 5 s); `onClose`: what close() does (releases the client).
   */
  constructor(
    private readonly db: Db,
    options: { internalSecret: string; commitTimeoutMs?: number; onClose?: () => Promise<void> },
  ) {
    this.onClose = options.onClose ?? (async () => {});
    this.transactionOptions = transactionOptions(options.commitTimeoutMs, WRITE.writeConcern);
    this.projects = db.collection<ProjectDoc>('gateway_projects');
    this.keys = db.collection<KeyDoc>('gateway_api_keys');
    this.purges = db.collection<PurgeDoc>('gateway_project_purges');
    this.operators = new MongoOperatorStore(db, new OperatorSecrets(options.internalSecret));
  }

  async init(): Promise<this> {
    // Before the indexes: an older release must not rebuild the indexes of a newer one's data.
    await migrateMongo(this.db, { component: 'gateway', where: `MongoDB database "${this.db.databaseName}"`, migrations: [] });
    await ensureMongoIndex(this.keys, { hash: 1 }, { unique: true, name: 'hash_unique' });
    await ensureMongoIndex(this.keys, { project: 1, created_at: 1 }, { name: 'project_created' });
    await ensureMongoIndex(this.projects, { created_at: 1, _id: 1 }, { name: 'created' });
    await this.operators.init();
    return this;
  }

  /** One transaction; keys an interrupted deletion of an earlier project of that id left behind are removed. */
  async createProject(project: ProjectRecord, keys: ApiKeyRecord[]): Promise<void> {
    try {
      await this.transaction(async (session) => {
        // deleteProject writes its tombstone in the same transaction as the removal, so a create
        // never slips in while that id's purge is still under way.
        if (await this.purges.findOne({ _id: project.id }, { session })) throw purgingError(project.id);
        await this.projects.insertOne({ _id: project.id, name: project.name, created_at: project.created_at }, { session });
        await this.keys.deleteMany({ project: project.id }, { session });
        if (keys.length > 0) await this.keys.insertMany(keys.map((k) => this.keyDoc(k)), { session });
      });
    } catch (err) {
      if (isDuplicateKey(err)) {
        const onProject = (err as MongoServerError).message.includes('gateway_projects');
        throw new ConflictError(onProject ? `Project ${project.id} already exists.` : 'Key already exists.');
      }
      throw err;
    }
  }

  async getProject(id: ProjectId): Promise<ProjectRecord | null> {
    const d = await this.projects.findOne({ _id: id });
    return d ? toProject(d) : null;
  }

  async listProjects(): Promise<ProjectRecord[]> {
    const docs = await this.projects.find({}, { sort: { created_at: 1, _id: 1 } }).toArray();
    return docs.map(toProject);
  }

  async deleteProject(id: ProjectId): Promise<boolean> {
    return this.transaction(async (session) => {
      if (!(await this.projects.findOne({ _id: id }, { session }))) return false;
      // Tombstone (a racing create sees it), keys (they stop working) and project, all or nothing.
      await this.purges.updateOne({ _id: id }, { $setOnInsert: { deleted_at: new Date().toISOString() } }, { upsert: true, session });
      await this.keys.deleteMany({ project: id }, { session });
      const r = await this.projects.deleteOne({ _id: id }, { session });
      return r.deletedCount > 0;
    });
  }

  async finishPurge(id: ProjectId): Promise<void> {
    await this.purges.deleteOne({ _id: id }, WRITE);
  }

  async listPurges(): Promise<ProjectId[]> {
    const docs = await this.purges.find({}, { sort: { deleted_at: 1, _id: 1 } }).toArray();
    return docs.map((d) => d._id as ProjectId);
  }

  async addKey(key: ApiKeyRecord): Promise<boolean> {
    try {
      return await this.transaction(async (session) => {
        // A write to the project document, so a concurrent deleteProject conflicts with this one.
        const seen = await this.projects.updateOne({ _id: key.project }, { $inc: { key_writes: 1 } }, { session });
        if (seen.matchedCount === 0) return false;
        await this.keys.insertOne(this.keyDoc(key), { session });
        return true;
      });
    } catch (err) {
      if (isDuplicateKey(err)) throw new ConflictError('Key already exists.');
      throw err;
    }
  }

  private transaction<T>(fn: (session: ClientSession) => Promise<T>): Promise<T> {
    return inMongoTransaction(this.db.client, this.transactionOptions, fn);
  }

  async listKeys(project: ProjectId): Promise<ApiKeyRecord[]> {
    const docs = await this.keys.find({ project }, { sort: { created_at: 1, _id: 1 } }).toArray();
    return docs.map(toKey);
  }

  async findKeyByHash(hash: string): Promise<ApiKeyRecord | null> {
    const d = await this.keys.findOne({ hash: String(hash) });
    if (!d) return null;
    // A key left behind by an interrupted deletion (before deletions were transactions) never counts.
    return (await this.projects.findOne({ _id: d.project })) ? toKey(d) : null;
  }

  async deleteKey(project: ProjectId, keyId: string): Promise<boolean> {
    const r = await this.keys.deleteOne({ _id: String(keyId), project }, WRITE);
    return r.deletedCount > 0;
  }

  async ping(): Promise<void> {
    await this.db.command({ ping: 1 });
  }

  async close(): Promise<void> {
    await this.onClose();
  }

  private keyDoc(k: ApiKeyRecord): KeyDoc {
    return { _id: k.id, project: k.project, kind: k.kind, hash: k.hash, prefix: k.prefix, created_at: k.created_at };
  }
}
