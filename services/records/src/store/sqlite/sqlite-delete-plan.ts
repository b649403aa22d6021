/**
 * A DeletePlan on SQLite (record-store.ts): the guards are read, then every delete and replace
 * is written, all inside the one savepoint the write batch gives it, so a failed check or a
 * unique violation undoes the whole plan and nothing of it is committed.
 */
import type { Statement } from 'better-sqlite3';
import type { ProjectId, SqliteDatabase } from '@plinth/shared';
import { translateUnique } from './sqlite-unique';
import type { SqliteWriteBatch } from './sqlite-write-batch';
import type { DeletePlan } from '../record-store';
import { splitRecord } from '../record-shape';
import { isListRelation } from '../../domain/relation-field';
import { fieldExpr } from './sqlite-predicate';

/** Thrown inside the savepoint to undo it: a checked version or guard no longer holds. */
class PlanMoved extends Error {}

type Prepared = (sql: string) => Statement;
type TableOf = (project: ProjectId, name: string) => string;

/**
 * Applies `plan` in the next group commit, in a transaction of its own (a savepoint inside the
 * batch's; a batch of one would otherwise run it bare): true once written whole, false when the
 * data moved (nothing written); a unique violation is a ConflictError.
 */
export async function runDeletePlan(
  db: SqliteDatabase,
  batch: SqliteWriteBatch,
  prepared: Prepared,
  table: TableOf,
  project: ProjectId,
  plan: DeletePlan,
  /** Runs in the plan's transaction once it is applied (the outbox appends the plan's events). */
  applied: () => void = () => {},
): Promise<boolean> {
  const apply = db.transaction(() => {
    applyDeletePlanSql(prepared, table, project, plan);
    applied();
  });
  try {
    await batch.run(() => apply());
    return true;
  } catch (err) {
    if (err instanceof PlanMoved) return false;
    return translateUnique(err);
  }
}

const marks = (n: number): string => Array.from({ length: n }, () => '?').join(', ');

/** Runs `plan` with `prepared` statements; throws PlanMoved when the data moved since it was read. */
function applyDeletePlanSql(prepared: Prepared, table: TableOf, project: ProjectId, plan: DeletePlan): void {
  for (const { ref, targets, referencing } of plan.guards) {
    if (targets.length === 0) continue;
    const t = table(project, ref.collection.name);
    const def = ref.collection.fields[ref.field];
    const sql = def && isListRelation(def)
      ? `SELECT id FROM "${t}" WHERE EXISTS (SELECT 1 FROM json_each(data, '$.${ref.field}') AS e WHERE e.value IN (${marks(targets.length)}))`
      : `SELECT id FROM "${t}" WHERE ${fieldExpr(ref.field)} IN (${marks(targets.length)})`;
    const found = (prepared(sql).all(...targets) as Array<{ id: string }>).map((r) => r.id);
    const expected = new Set(referencing);
    if (found.length !== expected.size || !found.every((id) => expected.has(id))) throw new PlanMoved();
  }
  for (const { collection, next, version } of plan.replaces) {
    const r = splitRecord(next);
    const done = prepared(`UPDATE "${table(project, collection.name)}" SET version = ?, updated_at = ?, data = ? WHERE id = ? AND version = ?`)
      .run(r.version, r.updated_at, JSON.stringify(r.data), r.id, version);
    if (done.changes !== 1) throw new PlanMoved();
  }
  for (const { collection, id, version } of plan.deletes) {
    const done = prepared(`DELETE FROM "${table(project, collection.name)}" WHERE id = ? AND version = ?`).run(id, version);
    if (done.changes !== 1) throw new PlanMoved();
  }
}
