/**
 * What both RecordStore adapters answer when a write breaks a unique field: ConflictError naming
 * the field. A record can break several at once, and each database reports whichever index it
 * checked first (SQLite and MongoDB check in different orders, which also depend on when each
 * index was made), so both name the *first unique field of the definition* that conflicts.
 */
import { ConflictError, type Collection, type RecordDoc } from '@plinth/shared';

export function uniqueConflict(field: string | undefined): ConflictError {
  return new ConflictError(
    field ? `Another record already has this value of unique field "${field}".` : 'Unique constraint violated.',
    field ? { field } : undefined,
  );
}

/** The record's values of unique fields, in the order of the definition (the order to check them in). */
export function uniqueValues(collection: Collection, record: RecordDoc): Array<[string, NonNullable<RecordDoc[string]>]> {
  const out: Array<[string, NonNullable<RecordDoc[string]>]> = [];
  for (const [field, def] of Object.entries(collection.fields)) {
    const value = record[field];
    if (def.unique && value !== undefined && value !== null) out.push([field, value]);
  }
  return out;
}
