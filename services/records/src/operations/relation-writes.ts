/**
 * The targets of relation values on write (docs/records.md, "Relations"): every id a create or
 * update writes into a relation field must be a record of the field's collection, and with
 * `readable_by_writer: true` one the writer may read (its read rule, for this caller). One query
 * per field; an id that fails either is a 400 naming the field and the id, with the same message
 * for both, so a write never tells a hidden record from a missing one.
 */
import { InvalidRequestError, type Collection, type Predicate, type RecordDoc } from '@plinth/shared';
import type { AccessPolicy } from '../domain/access-policy';
import type { RecordLimits } from '../domain/limits';
import { relationIds } from '../domain/relation-field';
import type { RecordStore } from '../store/record-store';
import { andP } from '../rules/predicate-algebra';
import { accessContext, bypassesRules, type Caller } from './caller';
import type { CollectionOperations } from './collection-operations';

export async function checkRelationTargets(
  deps: { store: RecordStore; policy: AccessPolicy; collections: CollectionOperations; limits: RecordLimits },
  caller: Caller,
  collection: Collection,
  record: RecordDoc,
  fields: Iterable<string>,
  now: Date,
): Promise<void> {
  for (const field of fields) {
    const def = Object.hasOwn(collection.fields, field) ? collection.fields[field] : undefined;
    if (!def || def.type !== 'relation' || def.collection === undefined) continue;
    const ids = relationIds(def, record[field]);
    if (ids.length === 0) continue;
    const target = def.collection === collection.name ? collection : await deps.collections.load(caller.project, def.collection);
    let readable: Predicate = true;
    if (def.readable_by_writer && !bypassesRules(caller)) readable = deps.policy.readFilter(accessContext(caller, now), target);
    const found = readable === false
      ? []
      : await deps.store.queryRecords(caller.project, target, {
          predicate: andP(['id', 'in', ids], readable),
          orderBy: 'id',
          direction: 'asc',
          limit: ids.length,
          timeoutMs: deps.limits.queryTimeoutMs,
          ...(caller.client ? { client: caller.client } : {}),
        });
    const have = new Set(found.map((r) => r.id));
    const missing = ids.find((id) => !have.has(id));
    if (missing !== undefined) {
      const what = def.readable_by_writer ? 'that you can read' : 'that exists';
      throw new InvalidRequestError(`Field "${field}" must point at a record of "${target.name}" ${what}; "${missing}" is not one.`, {
        field,
        id: missing,
        collection: target.name,
      });
    }
  }
}
