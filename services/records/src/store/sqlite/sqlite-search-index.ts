/**
 * The full-text index of a collection on SQLite (docs/records.md "Full-text search"): an FTS5
 * table with external content, over a view that reads each searchable field out of the record's
 * JSON. Triggers on the record table keep it in step with every insert, update and delete, so it
 * changes in the same transaction as the record (a batch of writes included) and can never
 * disagree with it. When the set of searchable fields changes, everything is dropped and built
 * again from the records (`rebuild`), inside the collection change's transaction.
 *
 * Names: `fts:<table>` (the index; FTS5 adds `fts:<table>_data`, `_idx`, `_docsize`, `_config`),
 * `fts:<table>:v` (the view) and `fts:<table>:ai|ad|au` (the triggers, dropped with the table).
 * Columns are `f_<hex of the field name>`. Tokenizer: unicode61 with diacritics removed, so
 * `cafe` finds `café`; no stemming.
 */
import type { Collection, SqliteDatabase } from '@plinth/shared';
import { searchableFields } from '../../domain/search-terms';

const hex = (field: string): string => Buffer.from(field, 'utf8').toString('hex');

export function searchTable(table: string): string {
  return `fts:${table}`;
}

/** A searchable field's value in `row` (NULL when the row's JSON cannot be read). */
function valueOf(row: string, field: string): string {
  return `CASE WHEN json_valid(${row}.data) THEN json_extract(${row}.data, '$.${field}') END`;
}

/** The DDL of the index for `fields`, in order; empty when there are none. */
function wantedDdl(table: string, fields: string[]): string[] {
  if (fields.length === 0) return [];
  const fts = searchTable(table);
  const cols = fields.map((f) => `f_${hex(f)}`);
  const values = (row: string): string => fields.map((f) => valueOf(row, f)).join(', ');
  const list = cols.join(', ');
  const del = `INSERT INTO "${fts}" ("${fts}", rowid, ${list}) VALUES ('delete', old.rowid, ${values('old')});`;
  const ins = `INSERT INTO "${fts}" (rowid, ${list}) VALUES (new.rowid, ${values('new')});`;
  return [
    `CREATE VIEW "${fts}:v" AS SELECT rowid AS rid, ${fields.map((f, i) => `${valueOf(`"${table}"`, f)} AS ${cols[i]}`).join(', ')} FROM "${table}"`,
    `CREATE VIRTUAL TABLE "${fts}" USING fts5(${list}, content='${fts}:v', content_rowid='rid', tokenize='unicode61 remove_diacritics 2')`,
    `CREATE TRIGGER "${fts}:ai" AFTER INSERT ON "${table}" BEGIN ${ins} END`,
    `CREATE TRIGGER "${fts}:ad" AFTER DELETE ON "${table}" BEGIN ${del} END`,
    `CREATE TRIGGER "${fts}:au" AFTER UPDATE OF data ON "${table}" BEGIN ${del} ${ins} END`,
  ];
}

/** Drops the index, its view and triggers (each if there). */
export function dropSearchIndex(db: SqliteDatabase, table: string): void {
  const fts = searchTable(table);
  for (const t of ['ai', 'ad', 'au']) db.exec(`DROP TRIGGER IF EXISTS "${fts}:${t}"`);
  db.exec(`DROP TABLE IF EXISTS "${fts}"`);
  db.exec(`DROP VIEW IF EXISTS "${fts}:v"`);
}

/**
 * Brings the index to the collection's searchable fields: nothing when the stored view is
 * already the wanted one, else drop, create and fill it from the records. Run inside the
 * collection change's transaction.
 */
export function syncSearchIndex(db: SqliteDatabase, table: string, collection: Collection): void {
  const ddl = wantedDdl(table, searchableFields(collection));
  const fts = searchTable(table);
  const view = db.prepare(`SELECT sql FROM sqlite_master WHERE type = 'view' AND name = ?`).get(`${fts}:v`) as { sql: string } | undefined;
  // An index left by a dropped table of the same name has lost its triggers (they go with the
  // table): it is built again, never reused.
  const triggers = db.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ? AND name IN (?, ?, ?)`).get(table, `${fts}:ai`, `${fts}:ad`, `${fts}:au`) as { n: number };
  if (ddl.length > 0 && view?.sql === ddl[0] && triggers.n === 3) return;
  dropSearchIndex(db, table);
  if (ddl.length === 0) return;
  for (const statement of ddl) db.exec(statement);
  db.exec(`INSERT INTO "${searchTable(table)}" ("${searchTable(table)}") VALUES ('rebuild')`);
}

/** Drops the index of every collection of a project (the tables whose names start with `prefix`). */
export function dropProjectSearchIndexes(db: SqliteDatabase, prefix: string): void {
  const fts = searchTable(prefix);
  const views = db
    .prepare(`SELECT name FROM sqlite_master WHERE type = 'view' AND substr(name, 1, ?) = ? AND name LIKE '%:v'`)
    .all(fts.length, fts) as Array<{ name: string }>;
  for (const { name } of views) dropSearchIndex(db, name.slice('fts:'.length, -':v'.length));
}

/**
 * The FTS5 query of `words`: each a quoted phrase (words hold letters, digits and marks only, so
 * nothing in them is FTS5 syntax), all required.
 */
export function ftsQuery(words: readonly string[]): string {
  return words.map((w) => `"${w.replaceAll('"', '""')}"`).join(' ');
}
