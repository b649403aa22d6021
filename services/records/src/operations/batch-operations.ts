/**
 * Atomic batch writes (`POST /v1/projects/{p}/batch`, docs/records.md "Batch writes"): up to
 * 100 creates, updates and deletes across collections, each with the same data checks, version
 * precondition and rules as its single call, all written in one store transaction or none.
 *
 * Every operation is checked against the state before the batch — its rule sees the records
 * as they were, lookups included, and one batch changes a record at most once — so the outcome
 * does not depend on the order of the operations. The writes are compare-and-sets on the
 * versions read: if another write changed one of them meanwhile, the whole batch is checked
 * again (or, for an operation that named its `version`, answered 409).
 */
import {
  ConflictError,
  InvalidRequestError,
  NotFoundError,
  newId,
  type ChangeEventInput,
  type Collection,
  type JsonValue,
  type RecordDoc,
} from '@plinth/shared';
import type { AccessPolicy } from '../domain/access-policy';
import { DEFAULT_LIMITS, type RecordLimits } from '../domain/limits';
import { mergeData, validateNewData } from '../domain/record-data';
import { deniedByRules } from '../domain/rule-refusal';
import { matchesPredicate } from '../rules/matches-predicate';
import { MAX_LOOKUPS_PER_BATCH, RuleLookups } from '../rules/rule-lookups';
import { BatchWriteError, type BatchIdempotency, type BatchWrite } from '../store/batch-write';
import type { RecordStore } from '../store/record-store';
import { atIndex, DEFAULT_MAX_BATCH_OPERATIONS, parseBatchRequest, type BatchOpRequest } from './batch-request';
import { accessContext, bypassesRules, type Caller } from './caller';
import type { CollectionOperations } from './collection-operations';
import { recordFetcher, settleRules } from './lookup-session';
import { noPublish, type PublishChange } from './publish-change';
import { relationsByTarget } from './relation-deletes';
import { checkRelationTargets } from './relation-writes';
import { checkIdempotencyKey, idempotencyClaim } from './idempotency-key';

/** Times a batch is checked again when a concurrent write moved one of its versions. */
const BATCH_ATTEMPTS = 5;

/** What one operation answers: what its single call would. */
export type BatchResult = { record: RecordDoc | Pick<RecordDoc, 'id' | 'version'> } | { deleted: true; id: string };

export interface BatchAnswer {
  results: BatchResult[];
  replayed: boolean;
}

interface Prepared {
  write: BatchWrite;
  result: BatchResult;
}

export class BatchOperations {
  constructor(
    private readonly store: RecordStore,
    private readonly policy: AccessPolicy,
    private readonly collections: CollectionOperations,
    private readonly clock: () => Date = () => new Date(),
    private readonly limits: RecordLimits = DEFAULT_LIMITS,
    private readonly publish: PublishChange = noPublish,
    private readonly maxOperations: number = DEFAULT_MAX_BATCH_OPERATIONS,
  ) {}

  async run(caller: Caller, rawBody: unknown, idempotencyKey: string | undefined): Promise<BatchAnswer> {
    const ops = parseBatchRequest(rawBody, this.maxOperations);
    checkIdempotencyKey(idempotencyKey);
    const collections = new Map<string, Collection>();
    for (const [i, op] of ops.entries()) {
      if (collections.has(op.collection)) continue;
      try {
        collections.set(op.collection, await this.collections.load(caller.project, op.collection));
      } catch (err) {
        throw atIndex(err, i);
      }
    }
    // A delete that relation fields point at has its own on_delete work (DELETE …/records/{id}).
    const referenced = await relationsByTarget(this.store, caller.project);
    for (const [i, op] of ops.entries()) {
      if (op.op === 'delete' && (referenced.get(op.collection)?.length ?? 0) > 0) {
        throw atIndex(new InvalidRequestError(`Records of ${op.collection} are the target of relation fields: delete them with DELETE …/records/{id}, not in a batch.`, { field: 'collection' }), i);
      }
    }
    // One lookup memo and one limit for the whole batch.
    const asker: Caller = bypassesRules(caller) ? caller : { ...caller, lookups: new RuleLookups(recordFetcher(this.store, caller.project), MAX_LOOKUPS_PER_BATCH, 'batch') };
    const now = this.clock();
    const claim = idempotencyKey === undefined ? undefined : idempotencyClaim(idempotencyKey, { batch: ops, uid: caller.auth?.uid ?? null }, now);
    for (let attempt = 0; attempt < BATCH_ATTEMPTS; attempt++) {
      let prepared: Prepared[];
      try {
        prepared = await this.prepare(asker, ops, collections);
      } catch (err) {
        // A retry of a batch that went through finds its records changed: answer what it answered.
        const replay = claim && (await this.store.applyBatch(caller.project, [], { claim, answer: null, probe: true })).replayed;
        if (replay) return { results: (replay as { results: BatchResult[] }).results, replayed: true };
        throw err;
      }
      const results = prepared.map((p) => p.result);
      const idempotency: BatchIdempotency | undefined = claim && { claim, answer: { results } as unknown as JsonValue };
      try {
        const applied = await this.store.applyBatch(caller.project, prepared.map((p) => p.write), idempotency);
        if (applied.replayed) return { results: (applied.replayed as { results: BatchResult[] }).results, replayed: true };
      } catch (err) {
        if (!(err instanceof BatchWriteError)) throw err;
        if (err.cause !== 'stale') throw atIndex(err.cause, err.index);
        const op = ops[err.index] as BatchOpRequest;
        if (op.op !== 'create' && op.version !== undefined) throw atIndex(await this.staleError(asker, op, collections), err.index);
        continue;
      }
      for (const p of prepared) await this.publish(p.write.event);
      return { results, replayed: false };
    }
    throw new ConflictError('Records of this batch are being changed concurrently; retry.');
  }

  /** Every operation built and checked against the state before the batch, in order. */
  private async prepare(caller: Caller, ops: BatchOpRequest[], collections: Map<string, Collection>): Promise<Prepared[]> {
    const now = this.clock();
    const stamp = now.toISOString();
    const out: Prepared[] = [];
    for (const [i, op] of ops.entries()) {
      const collection = collections.get(op.collection) as Collection;
      try {
        out.push(await this.prepareOne(caller, op, collection, now, stamp));
      } catch (err) {
        throw atIndex(err, i);
      }
    }
    return out;
  }

  private async prepareOne(caller: Caller, op: BatchOpRequest, collection: Collection, now: Date, stamp: string): Promise<Prepared> {
    const ctx = accessContext(caller, now);
    const ruled = !bypassesRules(caller);
    // The read rule's lookups first: the answer shows each record only to a caller who may read it.
    if (ruled) await settleRules(caller, () => this.policy.readFilter(ctx, collection));
    const name = collection.name;
    if (op.op === 'create') {
      const data = validateNewData(collection, op.data, this.limits);
      const record: RecordDoc = { id: newId('rec_'), version: 1, created_at: stamp, updated_at: stamp, ...data };
      await checkRelationTargets(this.deps(), caller, collection, record, Object.keys(data), now);
      if (ruled && !(await settleRules(caller, () => this.policy.canCreate(ctx, collection, record)))) {
        throw deniedByRules(caller, 'Security rules do not allow creating this record.');
      }
      const event: ChangeEventInput = { project: caller.project, collection: name, kind: 'create', record, committed_at: Date.now() };
      return { write: { op: 'create', collection, record, event }, result: { record: this.shown(caller, collection, record, now) } };
    }
    const before = await this.store.getRecord(caller.project, collection, op.id);
    if (!before) throw new NotFoundError(`Record "${op.id}" does not exist.`, { id: op.id });
    if (op.op === 'update') {
      const after: RecordDoc = { id: op.id, version: before.version + 1, created_at: before.created_at, updated_at: stamp, ...mergeData(collection, before, op.data, this.limits) };
      const changed = typeof op.data === 'object' && op.data !== null ? Object.keys(op.data) : [];
      await checkRelationTargets(this.deps(), caller, collection, after, changed, now);
      if (ruled && !(await settleRules(caller, () => this.policy.canUpdate(ctx, collection, before, after)))) {
        this.refuse(caller, collection, before, now, 'Security rules do not allow this update.');
      }
      this.checkVersion(caller, collection, before, op.version, now);
      const event: ChangeEventInput = { project: caller.project, collection: name, kind: 'update', record: after, previous: before, committed_at: Date.now() };
      return { write: { op: 'update', collection, record: after, expectedVersion: before.version, event }, result: { record: this.shown(caller, collection, after, now) } };
    }
    if (ruled && !(await settleRules(caller, () => this.policy.canDelete(ctx, collection, before)))) {
      this.refuse(caller, collection, before, now, 'Security rules do not allow deleting this record.');
    }
    this.checkVersion(caller, collection, before, op.version, now);
    const event: ChangeEventInput = { project: caller.project, collection: name, kind: 'delete', record: before, previous: before, committed_at: Date.now() };
    return { write: { op: 'delete', collection, id: op.id, expectedVersion: before.version, event }, result: { deleted: true, id: op.id } };
  }

  private deps() {
    return { store: this.store, policy: this.policy, collections: this.collections, limits: this.limits };
  }

  private canRead(caller: Caller, collection: Collection, record: RecordDoc, now: Date): boolean {
    if (bypassesRules(caller)) return true;
    const residual = this.policy.readFilter(accessContext(caller, now), collection);
    return residual !== false && matchesPredicate(record, residual);
  }

  private shown(caller: Caller, collection: Collection, record: RecordDoc, now: Date): RecordDoc | Pick<RecordDoc, 'id' | 'version'> {
    return this.canRead(caller, collection, record, now) ? record : { id: record.id, version: record.version };
  }

  /** As the single calls: a stale version is 409, with the current version only for a reader. */
  private checkVersion(caller: Caller, collection: Collection, current: RecordDoc, expected: number | undefined, now: Date): void {
    if (expected === undefined || current.version === expected) return;
    throw this.canRead(caller, collection, current, now)
      ? new ConflictError('The record has changed since that version.', { current_version: current.version })
      : new ConflictError('The record has changed since that version.');
  }

  /** As the single calls: 404 for a record the caller cannot read, else 403. */
  private refuse(caller: Caller, collection: Collection, record: RecordDoc, now: Date, message: string): never {
    const residual = this.policy.readFilter(accessContext(caller, now), collection);
    if (residual !== false && !matchesPredicate(record, residual)) throw new NotFoundError(`Record "${record.id}" does not exist.`, { id: record.id });
    throw deniedByRules(caller, message);
  }

  /** After a lost compare-and-set on an operation with a client version: 404 if the record went, else 409. */
  private async staleError(caller: Caller, op: Exclude<BatchOpRequest, { op: 'create' }>, collections: Map<string, Collection>): Promise<Error> {
    const collection = collections.get(op.collection) as Collection;
    const current = await this.store.getRecord(caller.project, collection, op.id);
    if (!current) return new NotFoundError(`Record "${op.id}" does not exist.`, { id: op.id });
    if (this.canRead(caller, collection, current, this.clock())) {
      return new ConflictError('The record has changed since that version.', { current_version: current.version });
    }
    return new ConflictError('The record has changed since that version.');
  }
}
