/**
 * An atomic batch on MongoDB (docs/records.md "Batch writes"): one multi-document transaction
 * (the driver retries it on transient errors such as a write conflict), each update and delete a
 * compare-and-set on the version; the first write that fails aborts it, so nothing is written.
 */
import { ConflictError, type ProjectId, type RecordDoc } from '@plinth/shared';
import type { ClientSession, Collection as MongoCollection, Db, TransactionOptions, WriteConcernSettings } from 'mongodb';
import { BATCH_KEY_SCOPE, BatchWriteError, type BatchApplied, type BatchIdempotency, type BatchWrite } from '../batch-write';
import { splitRecord } from '../record-shape';
import { assertBatchStorable } from '../storable';
import { uniqueConflict } from '../unique-conflict';
import { isDuplicateKey, reportedField } from './mongo-collections';
import type { RecordDocument } from './mongo-filter';

export interface MongoBatchDeps {
  db: Db;
  records: (project: ProjectId, name: string) => MongoCollection<RecordDocument>;
  keysCollection: string;
  majority: WriteConcernSettings;
  transactionOptions: TransactionOptions;
  /** Appends a write's change event in the batch's transaction (a store with an outbox). */
  append?: (session: ClientSession, event: BatchWrite['event']) => Promise<unknown>;
}

interface KeyDocument {
  _id: string;
  project: string;
  collection: string;
  fingerprint: string;
  record: unknown;
  expires_at: Date;
}

export async function applyMongoBatch(deps: MongoBatchDeps, project: ProjectId, writes: BatchWrite[], idempotency?: BatchIdempotency): Promise<BatchApplied> {
  assertBatchStorable(writes);
  const session = deps.db.client.startSession();
  try {
    return await session.withTransaction(async (): Promise<BatchApplied> => {
      const keys = deps.db.collection<KeyDocument>(deps.keysCollection, { writeConcern: deps.majority });
      const keyId = idempotency && `${project}/${BATCH_KEY_SCOPE}/${idempotency.claim.key}`;
      if (idempotency && keyId) {
        const prior = await keys.findOne({ _id: keyId }, { session });
        if (prior && prior.expires_at > new Date(idempotency.claim.now)) {
          if (prior.fingerprint !== idempotency.claim.fingerprint) {
            throw new ConflictError('This Idempotency-Key was used with another request body.', { header: 'Idempotency-Key' });
          }
          return { replayed: prior.record as BatchApplied['replayed'] };
        }
        if (idempotency.probe) return { replayed: null };
        if (prior) await keys.deleteOne({ _id: keyId }, { session });
      }
      for (const [i, w] of writes.entries()) await applyOne(deps, project, w, i, session);
      if (idempotency && keyId && !idempotency.probe) {
        const { claim, answer } = idempotency;
        await keys.insertOne({ _id: keyId, project, collection: BATCH_KEY_SCOPE, fingerprint: claim.fingerprint, record: answer, expires_at: new Date(claim.expiresAt) }, { session });
      }
      return { replayed: null };
    }, deps.transactionOptions);
  } finally {
    await session.endSession();
  }
}

function toDocument(record: RecordDoc): RecordDocument {
  const { id, ...rest } = splitRecord(record);
  return { _id: id, ...rest };
}

async function applyOne(deps: MongoBatchDeps, project: ProjectId, w: BatchWrite, index: number, session: ClientSession): Promise<void> {
  const records = deps.records(project, w.collection.name);
  let done: boolean;
  try {
    if (w.op === 'create') {
      await records.insertOne(toDocument(w.record), { session });
      done = true;
    } else if (w.op === 'update') {
      const { _id, version, updated_at, data } = toDocument(w.record);
      const result = await records.updateOne({ _id: { $eq: _id }, version: { $eq: w.expectedVersion } }, { $set: { version, updated_at, data } }, { session });
      done = result.matchedCount === 1;
    } else {
      const result = await records.deleteOne({ _id: { $eq: w.id }, version: { $eq: w.expectedVersion } }, { session });
      done = result.deletedCount === 1;
    }
  } catch (err) {
    // Transient errors (a write conflict, a failover) go back to withTransaction, which retries.
    if (!isDuplicateKey(err)) throw err;
    throw new BatchWriteError(index, uniqueConflict(reportedField(err)));
  }
  if (!done) throw new BatchWriteError(index, 'stale');
  await deps.append?.(session, w.event);
}
