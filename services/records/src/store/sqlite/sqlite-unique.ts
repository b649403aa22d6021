/**
 * Unique violations on SQLite as the ConflictError both stores raise (unique-conflict.ts): the
 * field named is the first unique field of the definition that conflicts, not whichever index
 * SQLite happened to check first.
 */
import type { Statement } from 'better-sqlite3';
import { isSqliteUniqueViolation, type Collection, type RecordDoc } from '@plinth/shared';
import { uniqueConflict, uniqueValues } from '../unique-conflict';
import { bindValue, fieldExpr } from './sqlite-predicate';

/** Unique indexes are named `ux:<table>:<field as hex>`. */
const UNIQUE_INDEX_IN_MESSAGE = /index 'ux:[^:']+:([0-9a-f]+)'/;

/**
 * A unique violation as ConflictError naming a field: `firstTaken` (see below) when given,
 * else the index SQLite names. Other errors are thrown as they are.
 */
export function translateUnique(err: unknown, firstTaken?: () => string | undefined): never {
  if (isSqliteUniqueViolation(err)) {
    const m = UNIQUE_INDEX_IN_MESSAGE.exec((err as Error).message);
    const reported = m?.[1] ? Buffer.from(m[1], 'hex').toString('utf8') : undefined;
    throw uniqueConflict(firstTaken?.() ?? reported);
  }
  throw err;
}

/**
 * The first unique field of the definition whose value in `record` another row of `table` holds
 * (each a search of that field's unique index), in the write's own transaction.
 */
export function firstTaken(prepared: (sql: string) => Statement, table: string, collection: Collection, record: RecordDoc): string | undefined {
  for (const [field, value] of uniqueValues(collection, record)) {
    if (typeof value === 'object') continue;
    const other = prepared(`SELECT 1 FROM "${table}" WHERE ${fieldExpr(field)} = ? AND id != ? LIMIT 1`).get(bindValue(value), record.id);
    if (other) return field;
  }
  return undefined;
}
