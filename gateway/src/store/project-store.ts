import { ConflictError, type ProjectId } from '@plinth/shared';
import type { OperatorStore } from './operator-store';

export interface ProjectRecord {
  id: ProjectId;
  name: string;
  created_at: string;
}

export type ApiKeyKind = 'public' | 'secret';

/** A project key as stored: never the key itself, only its SHA-256 and a short display prefix. */
export interface ApiKeyRecord {
  id: string;
  project: ProjectId;
  kind: ApiKeyKind;
  /** Hex SHA-256 of the full key. */
  hash: string;
  /** The first characters of the key, to tell keys apart in listings (`pk_3fA9…`). */
  prefix: string;
  created_at: string;
}

/**
 * The gateway's store of projects and their hashed keys (docs/architecture.md "Ports and adapters", docs/api-conventions.md "Credentials").
 * Adapters: sqlite-project-store.ts, mongo-project-store.ts; contract: test/project-store.contract.ts.
 */
export interface ProjectStore {
  /** Named operators, their sessions and the audit log, in the same database. */
  readonly operators: OperatorStore;
  /**
   * Creates a project together with its first keys. Throws ConflictError when the id is taken,
   * or while a deleted project of that id is still being purged; then nothing is stored.
   */
  createProject(project: ProjectRecord, keys: ApiKeyRecord[]): Promise<void>;
  /** Returns null when absent. */
  getProject(id: ProjectId): Promise<ProjectRecord | null>;
  /** All projects, oldest first (ties by id). */
  listProjects(): Promise<ProjectRecord[]>;
  /**
   * Deletes the project and all its keys, and leaves a purge tombstone: until `finishPurge(id)`,
   * `createProject` with this id throws ConflictError (the services still hold its data).
   * Returns false (and leaves nothing) when the project did not exist.
   */
  deleteProject(id: ProjectId): Promise<boolean>;
  /** Removes the purge tombstone of a deleted project; the id may be created again. Idempotent. */
  finishPurge(id: ProjectId): Promise<void>;
  /** Deleted projects whose purge has not finished, oldest deletion first. */
  listPurges(): Promise<ProjectId[]>;
  /** Adds a key to an existing project. Returns false (and stores nothing) when the project is absent. */
  addKey(key: ApiKeyRecord): Promise<boolean>;
  /** The project's keys, oldest first. */
  listKeys(project: ProjectId): Promise<ApiKeyRecord[]>;
  /** The key whose hash this is, or null. A deleted key is never returned. */
  findKeyByHash(hash: string): Promise<ApiKeyRecord | null>;
  /** Deletes one key of one project. Returns false when that project has no such key. */
  deleteKey(project: ProjectId, keyId: string): Promise<boolean>;
  /**
   * Optional, synchronous and cheap: a number that changes whenever ANOTHER process committed a
   * change to projects or keys (SQLite's `PRAGMA data_version`). Gateways on one SQLite file —
   * standalone workers — drop their key cache when it moves, so a revocation or a project
   * deletion made through one worker holds on the next request to every other.
   */
  changeCounter?(): number;
  /** Resolves when the backing database answers; drives /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** What createProject throws for an id whose deleted project is still being purged. */
export function purgingError(id: ProjectId): ConflictError {
  return new ConflictError(
    `Project ${id} was deleted and its data is still being purged; the id can be used again once the purge has finished.`,
    { reason: 'purge_pending' },
  );
}
