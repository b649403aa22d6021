import type { ChangeEventInput, Collection, JsonValue, RecordDoc } from '@plinth/shared';
import type { IdempotencyClaim } from './idempotency-claim';

/**
 * One write of an atomic batch (docs/records.md "Batch writes"), as the store applies it: every
 * record is complete (ids, versions and timestamps set by the service) and every update and
 * delete is a compare-and-set on the version the service read.
 */
export type BatchWrite = (
  | { op: 'create'; collection: Collection; record: RecordDoc }
  | { op: 'update'; collection: Collection; record: RecordDoc; expectedVersion: number }
  | { op: 'delete'; collection: Collection; id: string; expectedVersion: number }
) & {
  /** The write's change event: a store that keeps the event log appends it in the batch's transaction. */
  event: ChangeEventInput;
};

/** An `Idempotency-Key` for a whole batch: the answer to give again for the same key and body. */
export interface BatchIdempotency {
  claim: IdempotencyClaim;
  answer: JsonValue;
  /** Only look: answer a live key's stored answer, remember nothing (the writes are empty). */
  probe?: boolean;
}

export interface BatchApplied {
  /** The answer stored with the idempotency key when this is a replay (nothing was written). */
  replayed: JsonValue | null;
}

/**
 * Why a batch wrote nothing: the write at `index` failed. `cause` is `'stale'` when its record's
 * version moved or the record is gone (the compare-and-set failed), else the error it raised (a
 * unique violation as ConflictError, a collection deleted meanwhile as NotFoundError).
 */
export class BatchWriteError extends Error {
  constructor(
    readonly index: number,
    override readonly cause: 'stale' | unknown,
  ) {
    super(cause === 'stale' ? `batch write ${index}: the record changed` : `batch write ${index} failed`);
    this.name = 'BatchWriteError';
  }
}

/** Idempotency keys of batches are kept under this name, which no collection can have. */
export const BATCH_KEY_SCOPE = ':batch';
