/**
 * The migration runner on MongoDB (data-version.ts). Each component's data version is a document
 * of `plinth_data_version` (`_id`: the component). MongoDB has no transaction over index builds
 * and collection-wide updates, so a lock document field serialises the replicas that start
 * together: the first takes `lock` (an owner and an expiry) with one conditional update, applies
 * each migration above the stored version and writes the version after each (so a crash resumes
 * at the next one — each migration must be safe to run again after a crash in its middle), then
 * releases the lock. The others wait until the version is current. A lock whose holder died
 * expires after LOCK_TTL_MS and is taken over.
 */
import { randomUUID } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { DataVersionError, latestVersion, newerDataError, plinthRelease, type Migration, type MigrationOutcome, type VersionedComponent } from './data-version';

export type MongoMigration = Migration<Db> & { up(db: Db): Promise<void> };

export interface MongoComponent extends VersionedComponent<Db> {
  migrations: ReadonlyArray<MongoMigration>;
}

interface VersionDoc {
  _id: string;
  version: number;
  release?: string;
  migrated_at?: Date;
  lock?: { owner: string; until: Date };
}

export interface MongoMigrateOptions {
  /** A lock not renewed for this long is taken over (its holder is presumed dead). */
  lockTtlMs?: number;
  /** How long a start waits for another replica's migration. */
  waitMs?: number;
  pollMs?: number;
}

const LOCK_TTL_MS = 60_000;

function isDuplicateKey(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 11000;
}

/** Brings `component`'s data in `db` to this release's data version; DataVersionError on newer data. */
export async function migrateMongo(db: Db, spec: MongoComponent, opts: MongoMigrateOptions = {}): Promise<MigrationOutcome> {
  const latest = latestVersion(spec.migrations);
  const ttl = opts.lockTtlMs ?? LOCK_TTL_MS;
  const versions: Collection<VersionDoc> = db.collection<VersionDoc>('plinth_data_version');
  const owner = randomUUID();
  const deadline = Date.now() + (opts.waitMs ?? 10 * 60_000);
  let from: number | undefined;
  for (;;) {
    const doc = await versions.findOne({ _id: spec.component });
    const stored = doc?.version ?? 0;
    from ??= stored;
    if (stored > latest) throw newerDataError(spec, stored, doc?.release);
    if (doc && stored === latest && !doc.lock) return { component: spec.component, from, to: latest };
    if (!doc?.lock || doc.lock.until.getTime() < Date.now()) {
      let taken: VersionDoc | null = null;
      try {
        taken = await versions.findOneAndUpdate(
          { _id: spec.component, $or: [{ lock: { $exists: false } }, { 'lock.until': { $lt: new Date() } }] },
          { $set: { lock: { owner, until: new Date(Date.now() + ttl) } }, $setOnInsert: { version: 0 } },
          { upsert: true, returnDocument: 'after' },
        );
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      if (taken?.lock?.owner === owner) return runLocked(versions, spec, taken.version, latest, owner, ttl, db, from);
      // An upsert answers the document or a duplicate key; nothing at all is not a MongoDB to migrate on.
      if (taken === null && !(await versions.findOne({ _id: spec.component }))) {
        throw new DataVersionError(`${spec.where}: the server stored nothing for the data-version lock update.`);
      }
    }
    if (Date.now() >= deadline) {
      throw new DataVersionError(`${spec.where}: another process has been migrating ${spec.component} data for too long (lock in plinth_data_version); start again once it is done.`);
    }
    await new Promise((r) => setTimeout(r, opts.pollMs ?? 200));
  }
}

async function runLocked(
  versions: Collection<VersionDoc>,
  spec: MongoComponent,
  stored: number,
  latest: number,
  owner: string,
  ttl: number,
  db: Db,
  from: number,
): Promise<MigrationOutcome> {
  try {
    if (stored > latest) throw newerDataError(spec, stored, undefined);
    for (const m of spec.migrations) {
      if (m.version <= stored) continue;
      await m.up(db);
      const r = await versions.updateOne(
        { _id: spec.component, 'lock.owner': owner },
        { $set: { version: m.version, release: plinthRelease(), migrated_at: new Date(), lock: { owner, until: new Date(Date.now() + ttl) } } },
      );
      if (r.matchedCount !== 1) throw new DataVersionError(`${spec.where}: the migration lock of ${spec.component} data was lost (another process took it over); start again.`);
    }
    if (stored === latest) await versions.updateOne({ _id: spec.component, 'lock.owner': owner }, { $set: { release: plinthRelease(), migrated_at: new Date() } });
    return { component: spec.component, from, to: latest };
  } finally {
    await versions.updateOne({ _id: spec.component, 'lock.owner': owner }, { $unset: { lock: '' } });
  }
}
