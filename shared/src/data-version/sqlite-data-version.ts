/**
 * The migration runner of a SQLite database (data-version.ts). The data version of each component
 * whose tables live in the file is a row of `plinth_data_version`. Everything — reading the
 * version, creating the component's tables as the current release defines them (its baseline:
 * `CREATE … IF NOT EXISTS`), each migration above the stored version, writing the new version —
 * runs in one BEGIN IMMEDIATE transaction: a second process starting on the same file waits for
 * the write lock, then finds the version current and does nothing; a crash half-way leaves the
 * file as it was.
 */
import { isBusy, type SqliteDatabase } from '../sqlite';
import { DataVersionError, latestVersion, newerDataError, plinthRelease, type Migration, type MigrationOutcome, type VersionedComponent } from './data-version';

export type SqliteMigration = Migration<SqliteDatabase> & { up(db: SqliteDatabase): void };

export interface SqliteComponent extends VersionedComponent<SqliteDatabase> {
  migrations: ReadonlyArray<SqliteMigration>;
  /** Creates what is missing of the tables as they were before migration 1 (idempotent). */
  baseline(db: SqliteDatabase): void;
}

const TABLE = `CREATE TABLE IF NOT EXISTS plinth_data_version (
  component TEXT PRIMARY KEY, version INTEGER NOT NULL, release TEXT NOT NULL, migrated_at TEXT NOT NULL
)`;
/** How long a start waits for another process's migration of the same file. */
const LOCK_WAIT_MS = 120_000;
const SLEEP = new Int32Array(new SharedArrayBuffer(4));

/** The stored data version of `component` (0: never versioned — a release before data versions, or a new file). */
export function sqliteDataVersion(db: SqliteDatabase, component: string): { version: number; release?: string } {
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'plinth_data_version'").get();
  if (!exists) return { version: 0 };
  const row = db.prepare('SELECT version, release FROM plinth_data_version WHERE component = ?').get(component) as { version: number; release: string } | undefined;
  return row ?? { version: 0 };
}

/** Brings `component`'s tables in `db` to this release's data version; DataVersionError on newer data. */
export function migrateSqlite(db: SqliteDatabase, spec: SqliteComponent): MigrationOutcome {
  const latest = latestVersion(spec.migrations);
  const step = db.transaction((): MigrationOutcome => {
    const found = sqliteDataVersion(db, spec.component);
    if (found.version > latest) throw newerDataError(spec, found.version, found.release);
    spec.baseline(db);
    for (const m of spec.migrations) if (m.version > found.version) m.up(db);
    db.exec(TABLE);
    db.prepare(
      `INSERT INTO plinth_data_version (component, version, release, migrated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (component) DO UPDATE SET version = excluded.version, release = excluded.release, migrated_at = excluded.migrated_at
       WHERE plinth_data_version.version <> excluded.version`,
    ).run(spec.component, latest, plinthRelease(), new Date().toISOString());
    return { component: spec.component, from: found.version, to: latest };
  });
  if (db.inTransaction) return step();
  const until = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      return step.immediate();
    } catch (err) {
      if (!isBusy(err)) throw err;
      if (Date.now() >= until) {
        throw new DataVersionError(`${spec.where}: another process held the write lock for more than ${LOCK_WAIT_MS / 1000} s while ${spec.component} data was being migrated; start again once it is done.`);
      }
      Atomics.wait(SLEEP, 0, 0, 50);
    }
  }
}
