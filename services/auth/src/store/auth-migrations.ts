/**
 * The auth service's data versions (docs/architecture.md "Data versions and migrations"): its
 * migrations on SQLite (auth.db) and on MongoDB, each list numbered from 1 and only appended to.
 *
 * Version 1 (both): the upgrades earlier releases made at every start — probing auth.db for the
 * columns added since the first release, rebuilding auth_users once so e-mail is optional
 * (anonymous users), and on MongoDB giving users stored before `name_folded` existed their
 * folded name (an unindexed scan of every user, at every start of every replica) — now run once
 * per database.
 */
import type { Db } from 'mongodb';
import type { MongoMigration, SqliteDatabase, SqliteMigration } from '@plinth/shared';
import { allowUsersWithoutEmail } from './sqlite-users-without-email';
import { foldCase } from './user-store';

/** Columns added after the first release: [table, column, definition]. */
const ADDED_COLUMNS: ReadonlyArray<readonly [string, string, string]> = [
  ['auth_users', 'claims', "TEXT NOT NULL DEFAULT '{}'"],
  ['auth_one_time_tokens', 'email', 'TEXT'],
  ['auth_one_time_tokens', 'sid', 'TEXT'],
  ['auth_users', 'is_anonymous', 'INTEGER NOT NULL DEFAULT 0'],
  ['auth_one_time_tokens', 'data', 'TEXT'],
];

/** Indexes on added columns, made after ADDED_COLUMNS. Only anonymous users are in this one, so other writes never touch it. */
const ADDED_INDEXES = `
CREATE INDEX IF NOT EXISTS auth_users_anonymous_idle ON auth_users (last_sign_in_at) WHERE is_anonymous = 1;
`;

/** auth.db's migrations; `schema` is the user store's baseline (the rebuild of auth_users makes its indexes again). */
export function authSqliteMigrations(schema: string): SqliteMigration[] {
  return [
    {
      version: 1,
      name: 'columns added since the first release; e-mail optional',
      up(db: SqliteDatabase) {
        for (const [table, column, definition] of ADDED_COLUMNS) {
          const columns = db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>;
          if (!columns.some((c) => c.name === column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${definition}`);
        }
        allowUsersWithoutEmail(db, schema);
        db.exec(ADDED_INDEXES);
      },
    },
  ];
}

/** The auth collections' migrations on MongoDB. */
export const AUTH_MONGO_MIGRATIONS: MongoMigration[] = [
  {
    version: 1,
    name: 'folded display names of users stored before name_folded',
    async up(db: Db) {
      const users = db.collection<{ _id: string; display_name?: string | null; name_folded?: string | null }>('auth_users');
      const older = users.find({ display_name: { $type: 'string' }, name_folded: { $exists: false } }).project<{ _id: string; display_name: string }>({ display_name: 1 });
      for await (const d of older) await users.updateOne({ _id: d._id }, { $set: { name_folded: foldCase(d.display_name) } });
    },
  },
];
