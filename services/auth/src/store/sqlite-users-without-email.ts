import type { SqliteDatabase } from '@plinth/shared';

/**
 * The first releases had `email TEXT NOT NULL`; anonymous users have none. SQLite cannot drop a
 * NOT NULL, so the table is rebuilt once (same columns, same rows; its indexes are made again
 * from the store's schema and added indexes), in one transaction: a crash leaves the old table.
 */
export function allowUsersWithoutEmail(db: SqliteDatabase, schema: string): void {
  const emailRequired = () =>
    (db.prepare('PRAGMA table_info(auth_users)').all() as Array<{ name: string; notnull: number }>).some((c) => c.name === 'email' && c.notnull === 1);
  if (!emailRequired()) return;
  db.transaction(() => {
    // Read again under the write lock: another process starting at the same time may have rebuilt it.
    if (!emailRequired()) return;
    const columns = db.prepare('PRAGMA table_info(auth_users)').all() as Array<{ name: string }>;
    const { sql } = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'auth_users'").get() as { sql: string };
    const names = columns.map((c) => c.name).join(', ');
    db.exec(sql.replace(/^CREATE TABLE "?auth_users"?/, 'CREATE TABLE auth_users_rebuilt').replace(/\bemail TEXT NOT NULL\b/, 'email TEXT'));
    db.exec(`INSERT INTO auth_users_rebuilt (${names}) SELECT ${names} FROM auth_users`);
    db.exec('DROP TABLE auth_users');
    db.exec('ALTER TABLE auth_users_rebuilt RENAME TO auth_users');
    db.exec(schema);
  }).immediate();
}
