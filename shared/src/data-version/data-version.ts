/**
 * Data versions (docs/architecture.md "Data versions and migrations"): every database a Plinth
 * component owns carries the number of the last migration applied to it. A release lists its
 * migrations per component, numbered 1, 2, 3… and only ever appended to (forward-only: there are
 * no down-migrations; going back is restoring a backup). At start the component applies the
 * migrations above the stored number, once, under a lock (several replicas may start together),
 * and refuses to start on a number above its own newest migration: that data was written by a
 * newer release, whose schema this one cannot know.
 */
import fs from 'node:fs';
import path from 'node:path';
import { StartupError } from '../startup';

/** One step of a component's schema or data; `up` is written against the data version before it. */
export interface Migration<Db> {
  /** 1 for the first, then each one more than the last. */
  version: number;
  /** What it does, in a few words (kept with the version it wrote). */
  name: string;
  up(db: Db): void | Promise<void>;
}

export interface VersionedComponent<Db> {
  /** `gateway`, `records`, `auth`: one data version per component. */
  component: string;
  /** How an operator finds it: `auth.db in ./data`, `MongoDB database "plinth"`. */
  where: string;
  migrations: ReadonlyArray<Migration<Db>>;
}

/** What a start did: the data version found and the one left. */
export interface MigrationOutcome {
  component: string;
  from: number;
  to: number;
}

/** A reason not to start on this data: one line on stderr, exit code 1. */
export class DataVersionError extends StartupError {
  constructor(message: string) {
    super(message);
    this.name = 'DataVersionError';
  }
}

/** The newest data version a list of migrations reaches; throws when it is not 1, 2, 3… (a release bug). */
export function latestVersion(migrations: ReadonlyArray<Migration<unknown>>): number {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`migration "${m.name}" is numbered ${m.version}, expected ${i + 1}`);
  });
  return migrations.length;
}

/** The refusal to start on data a newer release wrote. */
export function newerDataError(spec: VersionedComponent<unknown>, stored: number, writtenBy: string | undefined): DataVersionError {
  const latest = latestVersion(spec.migrations);
  return new DataVersionError(
    `${spec.where} holds ${spec.component} data version ${stored}${writtenBy ? ` (written by Plinth ${writtenBy})` : ''}, newer than this Plinth ${plinthRelease()} knows (${latest}): ` +
      `run that release or a later one, or restore a backup taken before the upgrade (docs/operators.md "Upgrades and rollback").`,
  );
}

let release: string | undefined;

/** The version of this Plinth release (shared's package.json: every package of a release has the same). */
export function plinthRelease(): string {
  if (release) return release;
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '../../package.json'), 'utf8')) as { version?: string };
    release = pkg.version ?? 'unknown';
  } catch {
    release = 'unknown';
  }
  return release;
}
