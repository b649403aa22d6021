/**
 * A DeletePlan on MongoDB (record-store.ts): one transaction that reads the guards, then writes
 * every replace and delete with its version in the filter; a check that fails aborts the
 * transaction, so nothing of the plan is written. A list relation's field holds an array: the
 * same `$in` filter matches a single id or any id of a list.
 */
import type { ClientSession, Collection as MongoCollection, Db, TransactionOptions } from 'mongodb';
import type { ChangeEventInput, ProjectId } from '@plinth/shared';
import type { DeletePlan } from '../record-store';
import { splitRecord } from '../record-shape';
import { fieldPath, type RecordDocument } from './mongo-filter';

/** Thrown inside the transaction to abort it: a checked version or guard no longer holds. */
class PlanMoved extends Error {}

type RecordsOf = (project: ProjectId, name: string) => MongoCollection<RecordDocument>;

/** Appends a change event inside the plan's transaction (a store with an outbox). */
export type AppendIn = (session: ClientSession, event: ChangeEventInput) => Promise<unknown>;

async function applyIn(session: ClientSession, records: RecordsOf, project: ProjectId, plan: DeletePlan, append?: AppendIn): Promise<void> {
  for (const { ref, targets, referencing } of plan.guards) {
    if (targets.length === 0) continue;
    const found = await records(project, ref.collection.name)
      .find({ [fieldPath(ref.field)]: { $in: targets } }, { session, projection: { _id: 1 } })
      .toArray();
    const expected = new Set(referencing);
    if (found.length !== expected.size || !found.every((d) => expected.has(d._id))) throw new PlanMoved();
  }
  for (const { collection, next, version } of plan.replaces) {
    const { id, version: nextVersion, updated_at, data } = splitRecord(next);
    const done = await records(project, collection.name).updateOne(
      { _id: { $eq: id }, version: { $eq: version } },
      { $set: { version: nextVersion, updated_at, data } },
      { session },
    );
    if (done.matchedCount !== 1) throw new PlanMoved();
  }
  for (const { collection, id, version } of plan.deletes) {
    const done = await records(project, collection.name).deleteOne({ _id: { $eq: id }, version: { $eq: version } }, { session });
    if (done.deletedCount !== 1) throw new PlanMoved();
  }
  if (append) for (const event of plan.events ?? []) await append(session, event);
}

/** True when the plan was written whole; false (nothing written) when the data moved. */
export async function applyDeletePlanMongo(db: Db, records: RecordsOf, options: TransactionOptions, project: ProjectId, plan: DeletePlan, append?: AppendIn): Promise<boolean> {
  const session = db.client.startSession();
  try {
    await session.withTransaction(() => applyIn(session, records, project, plan, append), options);
    return true;
  } catch (err) {
    if (err instanceof PlanMoved) return false;
    throw err;
  } finally {
    await session.endSession();
  }
}
