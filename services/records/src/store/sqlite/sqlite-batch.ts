/**
 * An atomic batch on SQLite (docs/records.md "Batch writes"): every write in one immediate
 * transaction, each update and delete a compare-and-set on the version; the first write that
 * fails rolls back the whole transaction, so nothing of the batch is written.
 */
import type { Statement } from 'better-sqlite3';
import type { ProjectId, RecordDoc, SqliteDatabase, WriteRetry } from '@plinth/shared';
import { BATCH_KEY_SCOPE, BatchWriteError, type BatchApplied, type BatchIdempotency, type BatchWrite } from '../batch-write';
import { splitRecord } from '../record-shape';
import { assertBatchStorable } from '../storable';
import type { SqliteIdempotencyKeys } from './sqlite-idempotency-keys';
import { tableGone } from './sqlite-query-errors';
import { firstTaken, translateUnique } from './sqlite-unique';

export interface SqliteBatchDeps {
  db: SqliteDatabase;
  writes: WriteRetry;
  keys: SqliteIdempotencyKeys;
  prepared: (sql: string) => Statement;
  table: (project: ProjectId, collection: string) => string;
  /** Appends a write's change event in the batch's transaction, when the store keeps the event log. */
  append?: (event: BatchWrite['event']) => void;
}

export function applySqliteBatch(deps: SqliteBatchDeps, project: ProjectId, writes: BatchWrite[], idempotency?: BatchIdempotency): BatchApplied {
  assertBatchStorable(writes);
  if (idempotency) deps.keys.purgeExpired(idempotency.claim.now);
  return deps.writes.run(() =>
    deps.db.transaction((): BatchApplied => {
      if (idempotency) {
        const prior = deps.keys.replay(project, BATCH_KEY_SCOPE, idempotency.claim);
        // The key table holds records; a batch's entry holds its answer in the same column.
        if (prior) return { replayed: prior as unknown as BatchApplied['replayed'] };
      }
      writes.forEach((w, i) => {
        applyOne(deps, project, w, i);
        deps.append?.(w.event);
      });
      if (idempotency && !idempotency.probe) deps.keys.remember(project, BATCH_KEY_SCOPE, idempotency.claim, idempotency.answer as unknown as RecordDoc);
      return { replayed: null };
    }).immediate(),
  );
}

function applyOne(deps: SqliteBatchDeps, project: ProjectId, w: BatchWrite, index: number): void {
  const table = deps.table(project, w.collection.name);
  let changes: number;
  try {
    if (w.op === 'delete') {
      changes = deps.prepared(`DELETE FROM "${table}" WHERE id = ? AND version = ?`).run(w.id, w.expectedVersion).changes;
    } else {
      const r = splitRecord(w.record);
      const data = JSON.stringify(r.data);
      try {
        changes =
          w.op === 'create'
            ? deps.prepared(`INSERT INTO "${table}" (id, version, created_at, updated_at, data) VALUES (?, ?, ?, ?, ?)`).run(r.id, r.version, r.created_at, r.updated_at, data).changes
            : deps.prepared(`UPDATE "${table}" SET version = ?, updated_at = ?, data = ? WHERE id = ? AND version = ?`).run(r.version, r.updated_at, data, r.id, w.expectedVersion).changes;
      } catch (err) {
        translateUnique(err, () => firstTaken(deps.prepared, table, w.collection, w.record));
      }
    }
  } catch (err) {
    throw new BatchWriteError(index, tableGone(w.collection, err));
  }
  if (changes !== 1) throw new BatchWriteError(index, 'stale');
}
