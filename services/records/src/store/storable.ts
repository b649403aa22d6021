/**
 * The last check before a record is written, shared by both RecordStore adapters so they
 * answer alike: values BSON cannot keep (see unstorableJsonReason) are a 400 naming the field,
 * and a record whose BSON form would not fit in one MongoDB document (16 MiB, less room for the
 * idempotency entry that stores a copy) is a 413 — on SQLite too, so a record that grows by
 * PATCHes hits the same limit on either store.
 */
import { InvalidRequestError, PayloadTooLargeError, unstorableJsonReason, type RecordDoc } from '@plinth/shared';
import { BSON } from 'bson';
import { BatchWriteError, type BatchWrite } from './batch-write';
import { splitRecord } from './record-shape';

/** MongoDB's document limit (16 MiB) less 64 KiB for the wrapping of an idempotency entry. */
export const MAX_RECORD_BSON_BYTES = 16 * 1024 * 1024 - 64 * 1024;

export function assertStorable(record: RecordDoc): void {
  const { id, data, ...system } = splitRecord(record);
  for (const [field, value] of Object.entries(data)) {
    const why = unstorableJsonReason(value);
    if (why) throw new InvalidRequestError(`Field "${field}" ${why}.`, { field });
  }
  const bytes = BSON.calculateObjectSize({ _id: id, ...system, data });
  if (bytes > MAX_RECORD_BSON_BYTES) {
    throw new PayloadTooLargeError(`The record would take ${bytes} bytes; a record may take at most ${MAX_RECORD_BSON_BYTES}.`);
  }
}

/** Checks every record the batch writes can be stored before anything is written; the first that cannot is a BatchWriteError. */
export function assertBatchStorable(writes: readonly BatchWrite[]): void {
  writes.forEach((w, i) => {
    if (w.op === 'delete') return;
    try {
      assertStorable(w.record);
    } catch (err) {
      throw new BatchWriteError(i, err);
    }
  });
}
