import { ConflictError, isSqliteUniqueViolation, migrateSqlite, openSqlite, type ProjectId, type SqliteDatabase } from '@plinth/shared';
import { OperatorSecrets } from '../operators/operator-secrets';
import { SqliteOperatorStore } from './sqlite-operator-store';
import { purgingError, type ApiKeyRecord, type ProjectRecord, type ProjectStore } from './project-store';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS projects (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS api_keys (
  id TEXT PRIMARY KEY,
  project TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('public', 'secret')),
  hash TEXT NOT NULL UNIQUE,
  prefix TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS api_keys_project ON api_keys(project, created_at);
CREATE TABLE IF NOT EXISTS project_purges (
  id TEXT PRIMARY KEY,
  deleted_at TEXT NOT NULL
);
`;

type KeyRow = Omit<ApiKeyRecord, 'project'> & { project: string };

/**
 * ProjectStore on SQLite (standalone mode). `file` may be `:memory:`. `internalSecret`: the
 * deployment's PLINTH_INTERNAL_SECRET, from which the key sealing operators' TOTP secrets derives.
 */
export class SqliteProjectStore implements ProjectStore {
  private readonly db: SqliteDatabase;
  private readonly stmt;
  readonly operators: SqliteOperatorStore;

  constructor(file: string, opts: { internalSecret: string }) {
    this.db = openSqlite(file);
    migrateSqlite(this.db, { component: 'gateway', where: file, baseline: (db) => db.exec(SCHEMA), migrations: [] });
    this.operators = new SqliteOperatorStore(this.db, new OperatorSecrets(opts.internalSecret));
    this.stmt = {
      insertProject: this.db.prepare('INSERT INTO projects (id, name, created_at) VALUES (@id, @name, @created_at)'),
      getProject: this.db.prepare('SELECT id, name, created_at FROM projects WHERE id = ?'),
      listProjects: this.db.prepare('SELECT id, name, created_at FROM projects ORDER BY created_at, id'),
      deleteProject: this.db.prepare('DELETE FROM projects WHERE id = ?'),
      getPurge: this.db.prepare('SELECT id FROM project_purges WHERE id = ?'),
      insertPurge: this.db.prepare('INSERT OR IGNORE INTO project_purges (id, deleted_at) VALUES (?, ?)'),
      deletePurge: this.db.prepare('DELETE FROM project_purges WHERE id = ?'),
      listPurges: this.db.prepare('SELECT id FROM project_purges ORDER BY deleted_at, id'),
      insertKey: this.db.prepare(
        'INSERT INTO api_keys (id, project, kind, hash, prefix, created_at) VALUES (@id, @project, @kind, @hash, @prefix, @created_at)',
      ),
      listKeys: this.db.prepare('SELECT * FROM api_keys WHERE project = ? ORDER BY created_at, id'),
      findKey: this.db.prepare('SELECT * FROM api_keys WHERE hash = ?'),
      deleteKey: this.db.prepare('DELETE FROM api_keys WHERE project = ? AND id = ?'),
      dataVersion: this.db.prepare('PRAGMA data_version').pluck(),
    };
  }

  changeCounter(): number {
    return this.stmt.dataVersion.get() as number;
  }

  async createProject(project: ProjectRecord, keys: ApiKeyRecord[]): Promise<void> {
    const tx = this.db.transaction(() => {
      if (this.stmt.getPurge.get(project.id)) throw purgingError(project.id);
      this.stmt.insertProject.run(project);
      for (const k of keys) this.stmt.insertKey.run(k);
    });
    try {
      tx.immediate();
    } catch (err) {
      if (isSqliteUniqueViolation(err)) throw new ConflictError(`Project ${project.id} already exists.`);
      throw err;
    }
  }

  async getProject(id: ProjectId): Promise<ProjectRecord | null> {
    return (this.stmt.getProject.get(id) as ProjectRecord | undefined) ?? null;
  }

  async listProjects(): Promise<ProjectRecord[]> {
    return this.stmt.listProjects.all() as ProjectRecord[];
  }

  async deleteProject(id: ProjectId): Promise<boolean> {
    return this.db.transaction(() => {
      if (this.stmt.deleteProject.run(id).changes === 0) return false;
      this.stmt.insertPurge.run(id, new Date().toISOString());
      return true;
    }).immediate();
  }

  async finishPurge(id: ProjectId): Promise<void> {
    this.stmt.deletePurge.run(id);
  }

  async listPurges(): Promise<ProjectId[]> {
    return (this.stmt.listPurges.all() as Array<{ id: ProjectId }>).map((r) => r.id);
  }

  async addKey(key: ApiKeyRecord): Promise<boolean> {
    if (!this.stmt.getProject.get(key.project)) return false;
    try {
      this.stmt.insertKey.run(key);
    } catch (err) {
      if (isSqliteUniqueViolation(err)) throw new ConflictError('Key already exists.');
      throw err;
    }
    return true;
  }

  async listKeys(project: ProjectId): Promise<ApiKeyRecord[]> {
    return this.stmt.listKeys.all(project) as KeyRow[] as ApiKeyRecord[];
  }

  async findKeyByHash(hash: string): Promise<ApiKeyRecord | null> {
    return ((this.stmt.findKey.get(String(hash)) as KeyRow | undefined) as ApiKeyRecord | undefined) ?? null;
  }

  async deleteKey(project: ProjectId, keyId: string): Promise<boolean> {
    return this.stmt.deleteKey.run(project, keyId).changes > 0;
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
