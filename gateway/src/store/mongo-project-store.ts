import { MongoServerError, type Collection, type Db } from 'mongodb';
import { ConflictError, type ProjectId } from '@plinth/shared';
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

const WRITE = { writeConcern: { w: 'majority' as const } };

function isDuplicateKey(err: unknown): boolean {
  return err instanceof MongoServerError && err.code === 11000;
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

/** ProjectStore on MongoDB (cluster mode). Call `init()` once to create indexes. */
export class MongoProjectStore implements ProjectStore {
  private readonly projects: Collection<ProjectDoc>;
  private readonly keys: Collection<KeyDoc>;
  private readonly purges: Collection<PurgeDoc>;

  constructor(
    private readonly db: Db,
    private readonly onClose: () => Promise<void> = async () => {},
  ) {
    this.projects = db.collection<ProjectDoc>('gateway_projects');
    this.keys = db.collection<KeyDoc>('gateway_api_keys');
    this.purges = db.collection<PurgeDoc>('gateway_project_purges');
  }

  async init(): Promise<this> {
    await this.keys.createIndex({ hash: 1 }, { unique: true, name: 'hash_unique' });
    await this.keys.createIndex({ project: 1, created_at: 1 }, { name: 'project_created' });
    await this.projects.createIndex({ created_at: 1, _id: 1 }, { name: 'created' });
    return this;
  }

  async createProject(project: ProjectRecord, keys: ApiKeyRecord[]): Promise<void> {
    try {
      await this.projects.insertOne({ _id: project.id, name: project.name, created_at: project.created_at }, WRITE);
    } catch (err) {
      if (isDuplicateKey(err)) throw new ConflictError(`Project ${project.id} already exists.`);
      throw err;
    }
    // deleteProject writes its tombstone before removing the project, so a create that got
    // past the insert above sees the tombstone of any delete it raced with.
    if (await this.purges.findOne({ _id: project.id })) {
      await this.projects.deleteOne({ _id: project.id }, WRITE);
      throw purgingError(project.id);
    }
    try {
      if (keys.length > 0) await this.keys.insertMany(keys.map((k) => this.keyDoc(k)), WRITE);
    } catch (err) {
      await this.keys.deleteMany({ project: project.id }, WRITE);
      await this.projects.deleteOne({ _id: project.id }, WRITE);
      if (isDuplicateKey(err)) throw new ConflictError('Key already exists.');
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
    if (!(await this.projects.findOne({ _id: id }))) return false;
    // Tombstone first (a racing create sees it), then the keys (they stop working), then the project.
    await this.purges.updateOne({ _id: id }, { $setOnInsert: { deleted_at: new Date().toISOString() } }, { upsert: true, ...WRITE });
    await this.keys.deleteMany({ project: id }, WRITE);
    const r = await this.projects.deleteOne({ _id: id }, WRITE);
    return r.deletedCount > 0;
  }

  async finishPurge(id: ProjectId): Promise<void> {
    await this.purges.deleteOne({ _id: id }, WRITE);
  }

  async listPurges(): Promise<ProjectId[]> {
    const docs = await this.purges.find({}, { sort: { deleted_at: 1, _id: 1 } }).toArray();
    return docs.map((d) => d._id as ProjectId);
  }

  async addKey(key: ApiKeyRecord): Promise<boolean> {
    if (!(await this.projects.findOne({ _id: key.project }))) return false;
    try {
      await this.keys.insertOne(this.keyDoc(key), WRITE);
    } catch (err) {
      if (isDuplicateKey(err)) throw new ConflictError('Key already exists.');
      throw err;
    }
    return true;
  }

  async listKeys(project: ProjectId): Promise<ApiKeyRecord[]> {
    const docs = await this.keys.find({ project }, { sort: { created_at: 1, _id: 1 } }).toArray();
    return docs.map(toKey);
  }

  async findKeyByHash(hash: string): Promise<ApiKeyRecord | null> {
    const d = await this.keys.findOne({ hash: String(hash) });
    return d ? toKey(d) : null;
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
