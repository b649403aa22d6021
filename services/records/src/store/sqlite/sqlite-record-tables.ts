/**
 * The table of one collection's records and its indexes: created with the collection, its
 * field indexes (and search index) brought in line with each new definition, and what a field
 * removal does to rows the JSON functions cannot read.
 */
import type { Statement } from 'better-sqlite3';
import { ConflictError, type Collection, type SqliteDatabase } from '@plinth/shared';
import { wantedIndexes } from './sqlite-indexes';
import { MALFORMED_JSON, messageOf } from './sqlite-query-errors';
import { syncSearchIndex } from './sqlite-search-index';
import { translateUnique } from './sqlite-unique';

/** The store's cache of prepared statements. */
export type Prepare = (sql: string) => Statement;

/** A fresh, empty table for a new collection (one left by an interrupted delete is dropped first). */
export function createRecordTable(db: SqliteDatabase, table: string): void {
  db.exec(`DROP TABLE IF EXISTS "${table}"`);
  db.exec(`CREATE TABLE "${table}" (id TEXT PRIMARY KEY, version INTEGER NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, data TEXT NOT NULL)`);
  db.exec(`CREATE INDEX "sys:${table}:created_at" ON "${table}" (created_at, id)`);
  db.exec(`CREATE INDEX "sys:${table}:updated_at" ON "${table}" (updated_at, id)`);
}

/** Creates the indexes the definition wants and drops the ones it no longer does. */
export function syncIndexes(db: SqliteDatabase, prepare: Prepare, table: string, collection: Collection): void {
  syncSearchIndex(db, table, collection);
  const wanted = wantedIndexes(table, collection);
  const existing = prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND (name LIKE 'ix:%' OR name LIKE 'ic:%' OR name LIKE 'ux:%')`)
    .all(table) as Array<{ name: string }>;
  for (const { name } of existing) {
    if (!wanted.has(name)) db.exec(`DROP INDEX "${name}"`);
    wanted.delete(name);
  }
  for (const ddl of wanted.values()) {
    try {
      db.exec(ddl);
    } catch (err) {
      if (MALFORMED_JSON.test(messageOf(err))) {
        throw new ConflictError('A stored record cannot be indexed: its JSON is nested too deep. Repair or delete it first.');
      }
      translateUnique(err);
    }
  }
}

/**
 * Rows the JSON functions cannot read (see sqlite-query-sql.ts) lose removed fields in JavaScript,
 * whose parser has no depth limit: removing a poisoned field from the definition repairs them.
 */
export function removeFieldsFromUnreadableRows(prepare: Prepare, table: string, fields: string[]): void {
  const rows = prepare(`SELECT id, data FROM "${table}" WHERE NOT json_valid(data)`).all() as Array<{ id: string; data: string }>;
  const save = prepare(`UPDATE "${table}" SET data = ?, version = version + 1 WHERE id = ?`);
  for (const row of rows) {
    const data = JSON.parse(row.data) as { [field: string]: unknown };
    if (!fields.some((f) => Object.hasOwn(data, f))) continue;
    for (const field of fields) delete data[field];
    save.run(JSON.stringify(data), row.id);
  }
}
