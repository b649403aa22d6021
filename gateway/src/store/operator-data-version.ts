import type { Db } from 'mongodb';
import type { MongoMigration, SqliteDatabase, SqliteMigration } from '@plinth/shared';
import type { OperatorSecrets } from '../operators/operator-secrets';

/**
 * The data version of the operator tables (operators, their sessions, the audit log), a component
 * of its own beside `gateway` in gateway.db or the gateway's MongoDB database (docs/operators.md
 * "Upgrades and rollback"). Migrations are only ever appended.
 */
export const OPERATORS_COMPONENT = 'operators';

interface TotpColumns {
  id: string;
  totp_secret: string | null;
  totp_pending: string | null;
}

/** The sealed values of a row whose TOTP secrets are (partly) in clear; null when nothing changes. */
function sealed(secrets: OperatorSecrets, row: TotpColumns): { totp_secret: string | null; totp_pending: string | null } | null {
  const secret = row.totp_secret === null ? null : secrets.sealIfClear(row.id, row.totp_secret);
  const pending = row.totp_pending === null ? null : secrets.sealIfClear(row.id, row.totp_pending);
  if (secret === null && pending === null) return null;
  return { totp_secret: secret ?? row.totp_secret, totp_pending: pending ?? row.totp_pending };
}

/** Migrations of the SQLite operator tables (each runs inside the data-version transaction). */
export function sqliteOperatorMigrations(secrets: OperatorSecrets): SqliteMigration[] {
  return [
    {
      version: 1,
      name: 'seal operator TOTP secrets stored in clear',
      up(db: SqliteDatabase) {
        const rows = db.prepare('SELECT id, totp_secret, totp_pending FROM operators WHERE totp_secret IS NOT NULL OR totp_pending IS NOT NULL').all() as TotpColumns[];
        const update = db.prepare('UPDATE operators SET totp_secret = ?, totp_pending = ? WHERE id = ?');
        for (const row of rows) {
          const next = sealed(secrets, row);
          if (next) update.run(next.totp_secret, next.totp_pending, row.id);
        }
      },
    },
  ];
}

/**
 * Migrations of the MongoDB operator collections. Each is safe to run again after a crash in its
 * middle (the runner resumes at the migration that did not record its version): a value already
 * sealed is left as it is.
 */
export function mongoOperatorMigrations(secrets: OperatorSecrets, collection: string): MongoMigration[] {
  return [
    {
      version: 1,
      name: 'seal operator TOTP secrets stored in clear',
      async up(db: Db) {
        const operators = db.collection<{ _id: string; totp_secret: string | null; totp_pending: string | null }>(collection);
        const cursor = operators.find({ $or: [{ totp_secret: { $type: 'string' } }, { totp_pending: { $type: 'string' } }] }, { projection: { totp_secret: 1, totp_pending: 1 } });
        for await (const doc of cursor) {
          const next = sealed(secrets, { id: doc._id, totp_secret: doc.totp_secret ?? null, totp_pending: doc.totp_pending ?? null });
          // Compare-and-set: a value changed meanwhile (an enrolment) is not overwritten.
          if (next) await operators.updateOne({ _id: doc._id, totp_secret: doc.totp_secret ?? null, totp_pending: doc.totp_pending ?? null }, { $set: next }, { writeConcern: { w: 'majority', wtimeoutMS: 10_000 } });
        }
      },
    },
  ];
}
