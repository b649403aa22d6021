/**
 * Deleting a record that relation fields point at (docs/records.md, "Relations"): each
 * referencing field's `on_delete` decides — `restrict` refuses (409 naming the referencing
 * collection), `cascade` deletes the referencing records too (each must pass its own delete
 * rule, or the whole delete is refused), `set_null` removes the reference (a single relation
 * loses its value, a list the id). Everything is one DeletePlan, written in one transaction by
 * the store, and every record it deleted or changed is published. The work is bounded: a delete
 * touching more than MAX_CASCADE_RECORDS other records is refused with 409.
 */
import { ConflictError, type ChangeEventInput, type Collection, type JsonValue, type ProjectId, type RecordDoc } from '@plinth/shared';
import type { AccessPolicy } from '../domain/access-policy';
import type { RecordLimits } from '../domain/limits';
import { isListRelation } from '../domain/relation-field';
import { deniedByRules } from '../domain/rule-refusal';
import type { DeletePlan, RecordStore, RelationRef } from '../store/record-store';
import { accessContext, bypassesRules, type Caller } from './caller';
import type { PublishChange } from './publish-change';

/** The most records one delete may delete or change besides the record asked for. */
export const MAX_CASCADE_RECORDS = 100;

interface Touched {
  collection: Collection;
  before: RecordDoc;
  after?: RecordDoc;
}

const keyOf = (collection: string, id: string): string => `${collection}/${id}`;

/** The relation fields of the project pointing at each collection, by target name. */
export async function relationsByTarget(store: RecordStore, project: ProjectId): Promise<Map<string, RelationRef[]>> {
  const byTarget = new Map<string, RelationRef[]>();
  for (const collection of await store.listCollections(project)) {
    for (const [field, def] of Object.entries(collection.fields)) {
      if (def.type !== 'relation' || def.collection === undefined) continue;
      const refs = byTarget.get(def.collection) ?? [];
      refs.push({ collection, field });
      byTarget.set(def.collection, refs);
    }
  }
  return byTarget;
}

function tooMany(): ConflictError {
  return new ConflictError(
    `This delete would delete or change more than ${MAX_CASCADE_RECORDS} other records through relations; delete the referencing records first, in smaller steps.`,
    { reason: 'cascade_limit', limit: MAX_CASCADE_RECORDS },
  );
}

export class RelationDeletes {
  constructor(
    private readonly store: RecordStore,
    private readonly policy: AccessPolicy,
    private readonly limits: RecordLimits,
    private readonly publish: PublishChange,
  ) {}

  /**
   * Deletes `before` (already allowed by its own rule, at its read version) with what its
   * relations ask. Returns null when no relation field points at its collection (the caller
   * deletes it alone), false when the data moved meanwhile (nothing written; retry), true once
   * deleted and published.
   */
  async delete(caller: Caller, collection: Collection, before: RecordDoc, now: Date): Promise<boolean | null> {
    const byTarget = await relationsByTarget(this.store, caller.project);
    if (!byTarget.has(collection.name)) return null;
    const deleted = new Map<string, Touched>([[keyOf(collection.name, before.id), { collection, before }]]);
    const changed = new Map<string, Touched>();
    const guards = new Map<RelationRef, { targets: string[]; referencing: Set<string> }>();
    const restricted: Array<{ ref: RelationRef; id: string }> = [];
    const queue: Touched[] = [{ collection, before }];
    for (let next = queue.shift(); next; next = queue.shift()) {
      for (const ref of byTarget.get(next.collection.name) ?? []) {
        const found = await this.referencing(caller, ref, next.before.id);
        const guard = guards.get(ref) ?? { targets: [], referencing: new Set<string>() };
        guard.targets.push(next.before.id);
        for (const r of found) guard.referencing.add(r.id);
        guards.set(ref, guard);
        const onDelete = ref.collection.fields[ref.field]?.on_delete ?? 'restrict';
        for (const record of found) {
          const key = keyOf(ref.collection.name, record.id);
          if (deleted.has(key)) continue;
          if (onDelete === 'restrict') restricted.push({ ref, id: record.id });
          else if (onDelete === 'cascade') {
            if (!bypassesRules(caller) && !this.policy.canDelete(accessContext(caller, now), ref.collection, record)) {
              throw deniedByRules(
                caller,
                `Security rules do not allow deleting a record of "${ref.collection.name}" that this delete would cascade to (field "${ref.field}"); nothing was deleted.`,
              );
            }
            const touched = { collection: ref.collection, before: changed.get(key)?.before ?? record };
            changed.delete(key);
            deleted.set(key, touched);
            queue.push(touched);
          } else {
            const current = changed.get(key) ?? { collection: ref.collection, before: record };
            current.after = this.withoutReference(ref, current.after ?? current.before, next.before.id, current.before.version + 1, now);
            changed.set(key, current);
          }
          if (deleted.size - 1 + changed.size > MAX_CASCADE_RECORDS) throw tooMany();
        }
      }
    }
    for (const { ref, id } of restricted) {
      if (deleted.has(keyOf(ref.collection.name, id))) continue;
      throw new ConflictError(`Records of "${ref.collection.name}" point at this record through "${ref.field}" (on_delete: restrict); delete or change them first.`, {
        reason: 'restricted',
        collection: ref.collection.name,
        field: ref.field,
      });
    }
    const at = Date.now();
    // The events go into the plan's transaction when the store has an outbox (writesEvents).
    const events: ChangeEventInput[] = [
      ...[...deleted.values()].map((t) => ({ project: caller.project, collection: t.collection.name, kind: 'delete' as const, record: t.before, previous: t.before, committed_at: at })),
      ...[...changed.values()].map((t) => ({ project: caller.project, collection: t.collection.name, kind: 'update' as const, record: t.after as RecordDoc, previous: t.before, committed_at: at })),
    ];
    const plan: DeletePlan = {
      deletes: [...deleted.values()].map((t) => ({ collection: t.collection, id: t.before.id, version: t.before.version })),
      replaces: [...changed.values()].map((t) => ({ collection: t.collection, next: t.after as RecordDoc, version: t.before.version })),
      guards: [...guards.entries()].map(([ref, g]) => ({ ref, targets: g.targets, referencing: [...g.referencing] })),
      events,
    };
    if (!(await this.store.applyDeletePlan(caller.project, plan))) return false;
    for (const e of events) await this.publish(e);
    return true;
  }

  /** Every record pointing at `id` through `ref` (one query; more than the limit is refused). */
  private async referencing(caller: Caller, ref: RelationRef, id: string): Promise<RecordDoc[]> {
    const def = ref.collection.fields[ref.field];
    const list = def !== undefined && isListRelation(def);
    const found = await this.store.queryRecords(caller.project, ref.collection, {
      predicate: [ref.field, list ? 'array-contains' : '==', id],
      orderBy: 'id',
      direction: 'asc',
      limit: MAX_CASCADE_RECORDS + 1,
      timeoutMs: this.limits.queryTimeoutMs,
      ...(caller.client ? { client: caller.client } : {}),
    });
    if (found.length > MAX_CASCADE_RECORDS) throw tooMany();
    return found;
  }

  /** `record` without its reference to `id` through `ref` (a list keeps its other ids), as `version`. */
  private withoutReference(ref: RelationRef, record: RecordDoc, id: string, version: number, now: Date): RecordDoc {
    const def = ref.collection.fields[ref.field];
    const next: RecordDoc = { ...record, version, updated_at: now.toISOString() };
    const value = record[ref.field];
    if (def !== undefined && isListRelation(def) && Array.isArray(value)) next[ref.field] = value.filter((v: JsonValue) => v !== id);
    else delete next[ref.field];
    return next;
  }
}
