/**
 * Record operations (docs/records.md, docs/rules.md). Every operation goes through the AccessPolicy unless the
 * caller used the secret key: reads AND the policy's residual with the client's where, writes
 * ask canCreate / canUpdate / canDelete. Version checks are the store's compare-and-set.
 */
import {
  ConflictError,
  InvalidRequestError,
  NotFoundError,
  newId,
  type Collection,
  type Predicate,
  type RecordDoc,
} from '@plinth/shared';
import type { AccessContext, AccessPolicy } from '../domain/access-policy';
import { refuseUnknownKeys } from '../domain/collection-definition';
import { encodeCursor } from '../domain/cursor';
import { parseListQuery, type ListQuery } from '../domain/list-query';
import { parseAggregateQuery } from '../domain/aggregate-query';
import { mergeData, validateNewData } from '../domain/record-data';
import { splitRecord } from '../store/record-shape';
import type { RecordStore, SortDirection } from '../store/record-store';
import { matchesPredicate } from '../rules/matches-predicate';
import { andP } from '../rules/predicate-algebra';
import { resolveSubscription, type ResolvedSubscription } from '../rules/subscribe';
import { accessContext, bypassesRules, type Caller } from './caller';
import type { CollectionOperations } from './collection-operations';
import { DEFAULT_LIMITS, type RecordLimits } from '../domain/limits';
import { deniedByRules } from '../domain/rule-refusal';
import { noPublish, type PublishChange } from './publish-change';
import { RelationDeletes } from './relation-deletes';
import { expandRecords, parseExpand, type ExpandDeps, type ExpandTree } from './relation-expand';
import { checkRelationTargets } from './relation-writes';
import { checkIdempotencyKey, idempotencyClaim } from './idempotency-key';
import { settleRules, withRuleLookups } from './lookup-session';

/** Unconditional writes retry their compare-and-set this many times under contention. */
const WRITE_ATTEMPTS = 5;

export interface Page {
  records: RecordDoc[];
  cursor: string | null;
  /** With `count=true`: how many records the whole query matches (not only this page). */
  total?: number;
}

/** The answer of `GET …/aggregate`: only what was asked for. */
export interface Aggregates {
  count?: number;
  sum?: { [field: string]: number };
  avg?: { [field: string]: number | null };
}

/** The answer of `POST …/subscribe`. */
export interface Subscription extends ResolvedSubscription {
  order: { orderBy: string; direction: SortDirection };
  /** Present when the request asked for `snapshot: true`. */
  snapshot?: Page;
  /** The records the read rule looked up (get/exists), when it looked any up. */
  lookups?: Array<{ collection: string; id: string }>;
}

export interface Created {
  record: WriteResult;
  replayed: boolean;
}

function body(v: unknown): { [k: string]: unknown } {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw new InvalidRequestError('The body must be a JSON object like {"data":{...}}.', { field: 'body' });
  }
  return v as { [k: string]: unknown };
}

/** The page byte measure of the store port (RecordQuery.maxBytes): JSON of the user fields. */
function dataBytes(records: RecordDoc[]): number {
  let n = 0;
  for (const r of records) n += JSON.stringify(splitRecord(r).data).length;
  return n;
}

function parseVersion(v: unknown, where: 'body' | 'query'): number | undefined {
  if (v === undefined) return undefined;
  const n = where === 'query' && typeof v === 'string' && /^\d{1,15}$/.test(v) ? Number(v) : v;
  if (!Number.isSafeInteger(n) || (n as number) < 1) {
    throw new InvalidRequestError('"version" must be a positive integer.', { field: 'version' });
  }
  return n as number;
}

/** A stale version: 409, with the current version only for a caller who may read the record. */
function stale(current: RecordDoc, readable: boolean): ConflictError {
  return readable
    ? new ConflictError('The record has changed since that version.', { current_version: current.version })
    : new ConflictError('The record has changed since that version.');
}

/**
 * What a write answers with: the record, or only `{id, version}` when the read rule would hide
 * it from this caller (a write must not show what a read would not).
 */
export type WriteResult = RecordDoc | Pick<RecordDoc, 'id' | 'version'>;

export class RecordOperations {
  /** Relations: on_delete, expand and target checks (relation-*.ts). */
  private readonly relations: RelationDeletes;
  private readonly related: ExpandDeps;

  constructor(
    private readonly store: RecordStore,
    private readonly policy: AccessPolicy,
    private readonly collections: CollectionOperations,
    private readonly clock: () => Date = () => new Date(),
    private readonly limits: RecordLimits = DEFAULT_LIMITS,
    private readonly publish: PublishChange = noPublish,
  ) {
    this.relations = new RelationDeletes(store, policy, limits, publish);
    this.related = { store, policy, collections, limits };
  }

  /** The caller with its request's lookup memo, the read rule's lookups read (lookup-session.ts). */
  private ruled(caller: Caller, collection: Collection): Promise<Caller> {
    return withRuleLookups(this.store, this.policy, caller, collection, this.clock());
  }

  /** Whether the read rule lets this caller see `record` (always, with the secret key). */
  private canRead(caller: Caller, collection: Collection, record: RecordDoc, now: Date): boolean {
    if (bypassesRules(caller)) return true;
    const residual = this.policy.readFilter(accessContext(caller, now), collection);
    return residual !== false && matchesPredicate(record, residual);
  }

  /** The record as a write answers it: whole when readable by the caller, else `{id, version}`. */
  private shown(caller: Caller, collection: Collection, record: RecordDoc, now: Date): WriteResult {
    return this.canRead(caller, collection, record, now) ? record : { id: record.id, version: record.version };
  }

  /** The read residual: true for the secret key; 403 when the policy allows no read at all. */
  private readFilter(caller: Caller, collection: Collection): Predicate {
    if (bypassesRules(caller)) return true;
    const residual = this.policy.readFilter(accessContext(caller, this.clock()), collection);
    if (residual === false) throw deniedByRules(caller, 'Security rules do not allow reading this collection.');
    return residual;
  }

  async query(asker: Caller, name: string, params: { [k: string]: unknown }): Promise<Page> {
    const collection = await this.collections.load(asker.project, name);
    const caller = await this.ruled(asker, collection);
    const { expand, ...rest } = params;
    const q = parseListQuery(collection, rest);
    const predicate = andP(q.shape.where, this.readFilter(caller, collection));
    const tree = await parseExpand(this.related, caller, collection, expand);
    if (!q.count) return this.page(caller, collection, q, predicate, tree);
    const started = Date.now();
    const page = await this.page(caller, collection, q, predicate, tree);
    // After the page, not beside it, with what is left of the one time budget: a request holds
    // one place in the query queue at a time, so count=true never doubles a caller's share.
    const counted = await this.store.aggregateRecords(caller.project, collection, {
      predicate,
      ...(q.search ? { search: q.search } : {}),
      sum: [],
      avg: [],
      timeoutMs: Math.max(1, this.limits.queryTimeoutMs - (Date.now() - started)),
      client: caller.client,
    });
    return { ...page, total: counted.count };
  }

  /**
   * `GET …/aggregate`: count, sums and means over exactly the records a list with the same where
   * would return to this caller (the where AND the read rule's residual), in one store query.
   */
  async aggregate(asker: Caller, name: string, params: { [k: string]: unknown }): Promise<Aggregates> {
    const collection = await this.collections.load(asker.project, name);
    const caller = await this.ruled(asker, collection);
    const a = parseAggregateQuery(collection, params);
    const predicate = andP(a.where, this.readFilter(caller, collection));
    const result = await this.store.aggregateRecords(caller.project, collection, {
      predicate,
      ...(a.search ? { search: a.search } : {}),
      sum: a.sum,
      avg: a.avg,
      timeoutMs: this.limits.queryTimeoutMs,
      client: caller.client,
    });
    return {
      ...(a.count ? { count: result.count } : {}),
      ...(a.sum.length > 0 ? { sum: result.sum } : {}),
      ...(a.avg.length > 0 ? { avg: result.avg } : {}),
    };
  }

  /**
   * `POST …/subscribe` (docs/rules.md): the client's where AND the read rule's residual for this
   * caller, and optionally the first page of exactly that query (GET …/records continues it with
   * the returned cursor and the same where, orderBy and direction).
   */
  async subscribe(asker: Caller, name: string, rawBody: unknown): Promise<Subscription> {
    const collection = await this.collections.load(asker.project, name);
    const caller = await this.ruled(asker, collection);
    const b = body(rawBody ?? {});
    refuseUnknownKeys(b, ['where', 'orderBy', 'direction', 'snapshot', 'limit', 'expand']);
    if (b.snapshot !== undefined && typeof b.snapshot !== 'boolean') {
      throw new InvalidRequestError('"snapshot" must be true or false.', { field: 'snapshot' });
    }
    for (const field of ['orderBy', 'direction'] as const) {
      if (b[field] !== undefined && typeof b[field] !== 'string') {
        throw new InvalidRequestError(`"${field}" must be a string.`, { field });
      }
    }
    if (b.where !== undefined && typeof b.where !== 'string' && !Array.isArray(b.where)) {
      throw new InvalidRequestError('"where" must be an array of [field, operator, value] conditions.', { field: 'where' });
    }
    const where = Array.isArray(b.where) ? JSON.stringify(b.where) : b.where;
    const q = parseListQuery(collection, { where, orderBy: b.orderBy, direction: b.direction });
    const tree = await parseExpand(this.related, caller, collection, b.expand);
    const policy = {
      readFilter: (ctx: AccessContext, c: Collection): Predicate => (bypassesRules(caller) ? true : this.policy.readFilter(ctx, c)),
    };
    const resolved = resolveSubscription(policy, {
      collection,
      where: q.shape.where,
      ctx: accessContext(caller, this.clock()),
      // resolveSubscription checks the type and range (400 naming "limit").
      limit: b.limit as number | undefined,
    });
    const subscription: Subscription = {
      collection: resolved.collection,
      revision: resolved.revision,
      predicate: resolved.predicate,
      order: { orderBy: q.shape.orderBy, direction: q.shape.direction },
      limit: resolved.limit,
      expires_at: resolved.expires_at,
      // The records the read rule looked up: realtime resolves the subscription again when one changes.
      ...(caller.lookups && caller.lookups.traces().length > 0 ? { lookups: caller.lookups.traces().map(({ collection: c, id }) => ({ collection: c, id })) } : {}),
    };
    if (b.snapshot === true) {
      subscription.snapshot = await this.page(caller, collection, { ...q, limit: resolved.limit }, resolved.predicate, tree);
    }
    return subscription;
  }

  /**
   * One page of `predicate` in the order of `q`, with the cursor GET …/records accepts for `q`.
   * Bounded: the page stops early, with a cursor, once its records hold the page byte budget,
   * and the query is stopped (503) past the time budget.
   */
  private async page(caller: Caller, collection: Collection, q: ListQuery, predicate: Predicate, tree: ExpandTree = []): Promise<Page> {
    const rows = await this.store.queryRecords(caller.project, collection, {
      predicate,
      ...(q.search ? { search: q.search } : {}),
      orderBy: q.shape.orderBy,
      direction: q.shape.direction,
      limit: q.limit + 1,
      maxBytes: this.limits.maxPageBytes,
      timeoutMs: this.limits.queryTimeoutMs,
      client: caller.client,
      ...(q.after ? { after: q.after } : {}),
    });
    const records = rows.slice(0, q.limit);
    const last = records[records.length - 1];
    const more = rows.length > q.limit || (last !== undefined && dataBytes(records) >= this.limits.maxPageBytes);
    // A ranked search continues by position (cursor.ts): the records before the next page.
    const position = (typeof q.after?.value === 'number' ? q.after.value : 0) + records.length;
    const cursor = more && last ? encodeCursor(q.shape, last, position) : null;
    return { records: await expandRecords(this.related, caller, tree, records, this.clock()), cursor };
  }

  /** 404 when absent, and when the record exists but fails the read residual. */
  async get(asker: Caller, name: string, id: string, params: { [k: string]: unknown } = {}): Promise<RecordDoc> {
    const collection = await this.collections.load(asker.project, name);
    const caller = await this.ruled(asker, collection);
    const residual = this.readFilter(caller, collection);
    const tree = await parseExpand(this.related, caller, collection, params.expand);
    const found =
      residual === true
        ? await this.store.getRecord(caller.project, collection, id)
        : ((
            await this.store.queryRecords(caller.project, collection, {
              predicate: { and: [['id', '==', id], residual] },
              orderBy: 'id',
              direction: 'asc',
              limit: 1,
              timeoutMs: this.limits.queryTimeoutMs,
              client: caller.client,
            })
          )[0] ?? null);
    if (!found) throw new NotFoundError(`Record "${id}" does not exist.`, { id });
    return (await expandRecords(this.related, caller, tree, [found], this.clock()))[0] as RecordDoc;
  }

  async create(asker: Caller, name: string, rawBody: unknown, idempotencyKey: string | undefined, loaded?: Collection): Promise<Created> {
    const collection = loaded ?? (await this.collections.load(asker.project, name));
    const caller = await this.ruled(asker, collection);
    const b = body(rawBody);
    refuseUnknownKeys(b, ['data']);
    const data = validateNewData(collection, b.data ?? {}, this.limits);
    const now = this.clock();
    const stamp = now.toISOString();
    const record: RecordDoc = { id: newId('rec_'), version: 1, created_at: stamp, updated_at: stamp, ...data };
    if (!bypassesRules(caller) && !(await settleRules(caller, () => this.policy.canCreate(accessContext(caller, now), collection, record)))) {
      throw deniedByRules(caller, 'Security rules do not allow creating this record.');
    }
    await checkRelationTargets(this.related, caller, collection, record, Object.keys(data), now);
    checkIdempotencyKey(idempotencyKey);
    const claim = idempotencyKey === undefined ? undefined : idempotencyClaim(idempotencyKey, { collection: name, data, uid: caller.auth?.uid ?? null }, now);
    // The event goes into the write's own transaction when the store has an outbox (writesEvents).
    const event = { project: caller.project, collection: name, kind: 'create' as const, record, committed_at: Date.now() };
    const inserted = await this.store.insertRecord(caller.project, collection, record, claim, event);
    if (!inserted.replayed) await this.publish(event);
    return { record: this.shown(caller, collection, inserted.record, now), replayed: inserted.replayed };
  }

  /**
   * Rules before preconditions: the write rule is evaluated first (a refusal is 404 for a record
   * the caller cannot read, 403 otherwise), then the version, so a stale version never reveals a
   * hidden record. The answer is the record only when the caller may read it afterwards.
   */
  async update(asker: Caller, name: string, id: string, rawBody: unknown, loaded?: Collection): Promise<WriteResult> {
    const collection = loaded ?? (await this.collections.load(asker.project, name));
    const caller = await this.ruled(asker, collection);
    const b = body(rawBody);
    refuseUnknownKeys(b, ['data', 'version']);
    const expected = parseVersion(b.version, 'body');
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const before = await this.store.getRecord(caller.project, collection, id);
      if (!before) throw new NotFoundError(`Record "${id}" does not exist.`, { id });
      const now = this.clock();
      const after: RecordDoc = {
        id,
        version: before.version + 1,
        created_at: before.created_at,
        updated_at: now.toISOString(),
        ...mergeData(collection, before, b.data, this.limits),
      };
      if (!bypassesRules(caller) && !(await settleRules(caller, () => this.policy.canUpdate(accessContext(caller, now), collection, before, after)))) {
        this.refuseWrite(caller, collection, before, now, 'Security rules do not allow this update.');
      }
      if (expected !== undefined && before.version !== expected) throw stale(before, this.canRead(caller, collection, before, now));
      if (attempt === 0) await checkRelationTargets(this.related, caller, collection, after, Object.keys(body(b.data ?? {})), now);
      const event = { project: caller.project, collection: name, kind: 'update' as const, record: after, previous: before, committed_at: Date.now() };
      const saved = await this.store.replaceRecord(caller.project, collection, after, before.version, event);
      if (saved) {
        await this.publish(event);
        return this.shown(caller, collection, saved, now);
      }
      if (expected !== undefined) await this.refuseStale(caller, collection, id);
    }
    throw new ConflictError('The record is being changed concurrently; retry.', { id });
  }

  async delete(asker: Caller, name: string, id: string, rawVersion: unknown, loaded?: Collection): Promise<void> {
    const collection = loaded ?? (await this.collections.load(asker.project, name));
    const caller = await this.ruled(asker, collection);
    const expected = parseVersion(rawVersion, 'query');
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const before = await this.store.getRecord(caller.project, collection, id);
      if (!before) throw new NotFoundError(`Record "${id}" does not exist.`, { id });
      const now = this.clock();
      if (!bypassesRules(caller) && !(await settleRules(caller, () => this.policy.canDelete(accessContext(caller, now), collection, before)))) {
        this.refuseWrite(caller, collection, before, now, 'Security rules do not allow deleting this record.');
      }
      if (expected !== undefined && before.version !== expected) throw stale(before, this.canRead(caller, collection, before, now));
      const related = await this.relations.delete(caller, collection, before, now);
      if (related === true) return;
      const event = { project: caller.project, collection: name, kind: 'delete' as const, record: before, previous: before, committed_at: Date.now() };
      if (related === null && (await this.store.deleteRecord(caller.project, collection, id, before.version, event))) {
        await this.publish(event);
        return;
      }
      if (expected !== undefined) await this.refuseStale(caller, collection, id);
    }
    throw new ConflictError('The record is being changed concurrently; retry.', { id });
  }

  /**
   * A refused update or delete, answered as get would answer for that record: 404 when the read
   * rule lets the caller read some records but not this one (its existence stays hidden), 403
   * when they may read it, or may read nothing in the collection.
   */
  private refuseWrite(caller: Caller, collection: Collection, record: RecordDoc, now: Date, message: string): never {
    const residual = this.policy.readFilter(accessContext(caller, now), collection);
    if (residual !== false && !matchesPredicate(record, residual)) {
      throw new NotFoundError(`Record "${record.id}" does not exist.`, { id: record.id });
    }
    throw deniedByRules(caller, message);
  }

  /** After a lost compare-and-set with a client version: 404 if the record went, else 409. */
  private async refuseStale(caller: Caller, collection: Collection, id: string): Promise<never> {
    const current = await this.store.getRecord(caller.project, collection, id);
    if (!current) throw new NotFoundError(`Record "${id}" does not exist.`, { id });
    throw stale(current, this.canRead(caller, collection, current, this.clock()));
  }
}
