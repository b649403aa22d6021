/**
 * The rule simulator (`POST …/collections/{c}/rules/simulate`, docs/rules.md): runs the
 * collection's stored rules through the same AccessPolicy the record routes use, as a public-key
 * request by the given user would, and says whether it is allowed. Secret key only.
 */
import {
  ForbiddenError,
  InvalidRequestError,
  matchesPredicate,
  type Collection,
  type JsonValue,
  type Predicate,
  type RecordDoc,
} from '@plinth/shared';
import type { AccessContext, AccessPolicy, AuthInfo } from '../domain/access-policy';
import { objectParam, parseCollectionName, parseFields, parseRules, refuseUnknownKeys } from '../domain/collection-definition';
import type { Caller } from './caller';
import { RuleLookups, type LookupTrace } from '../rules/rule-lookups';
import type { RecordStore } from '../store/record-store';
import { recordFetcher } from './lookup-session';
import type { CollectionOperations } from './collection-operations';

const OPERATIONS = ['read', 'create', 'update', 'delete'] as const;
type Operation = (typeof OPERATIONS)[number];

export interface SimulationResult {
  allowed: boolean;
  operation: Operation;
  /** Reads: the predicate the store would AND with the client's `where` (`true` = everything). */
  residual?: Predicate;
  reason: string;
  /** Every get()/exists() the rule made, in order, with the record found (null: none). */
  lookups: LookupTrace[];
}

type Doc = { [field: string]: JsonValue };

function isObject(v: unknown): v is { [k: string]: unknown } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function parseAuth(v: unknown, now: Date): AuthInfo | null {
  if (v === undefined || v === null) return null;
  if (!isObject(v)) throw new InvalidRequestError('"auth" must be null or an object {uid, email?, email_verified?, claims?}.', { field: 'auth' });
  refuseUnknownKeys(v, ['uid', 'email', 'email_verified', 'claims']);
  if (typeof v.uid !== 'string' || v.uid === '') throw new InvalidRequestError('"auth.uid" must be a non-empty string.', { field: 'auth.uid' });
  if (v.email !== undefined && v.email !== null && typeof v.email !== 'string') {
    throw new InvalidRequestError('"auth.email" must be a string or null.', { field: 'auth.email' });
  }
  if (v.email_verified !== undefined && typeof v.email_verified !== 'boolean') {
    throw new InvalidRequestError('"auth.email_verified" must be a boolean.', { field: 'auth.email_verified' });
  }
  if (v.claims !== undefined && !isObject(v.claims)) throw new InvalidRequestError('"auth.claims" must be a JSON object.', { field: 'auth.claims' });
  return {
    uid: v.uid,
    email: typeof v.email === 'string' ? v.email : null,
    email_verified: v.email_verified === true,
    claims: (v.claims ?? {}) as { [name: string]: JsonValue },
    exp: Math.floor(now.getTime() / 1000) + 3600,
  };
}

function parseDoc(name: 'record' | 'data', v: unknown, needed: boolean, op: Operation): Doc | undefined {
  if (v === undefined || v === null) {
    if (needed) throw new InvalidRequestError(`"${name}" is required to simulate ${op} (a JSON object of field values).`, { field: name });
    return undefined;
  }
  if (!isObject(v)) throw new InvalidRequestError(`"${name}" must be a JSON object of field values.`, { field: name });
  return v as Doc;
}

/** A document as the policy sees it: the system fields filled when the caller left them out. */
function asRecord(doc: Doc, now: Date): RecordDoc {
  const at = now.toISOString();
  return { id: 'simulated', version: 1, created_at: at, updated_at: at, ...doc } as RecordDoc;
}

export class RuleSimulation {
  constructor(
    private readonly collections: CollectionOperations,
    private readonly policy: AccessPolicy,
    private readonly clock: () => Date = () => new Date(),
    /** Reads the records rules look up; without it get() and exists() deny. */
    private readonly store?: RecordStore,
  ) {}

  async simulate(caller: Caller, name: string, body: unknown): Promise<SimulationResult> {
    if (caller.keyKind !== 'secret') throw new ForbiddenError('Simulating rules needs the secret key.');
    const b = objectParam('body', body ?? {});
    refuseUnknownKeys(b, ['operation', 'auth', 'record', 'data']);
    const operation = b.operation;
    if (typeof operation !== 'string' || !(OPERATIONS as readonly string[]).includes(operation)) {
      throw new InvalidRequestError('"operation" must be one of read, create, update, delete.', { field: 'operation' });
    }
    const op = operation as Operation;
    const now = this.clock();
    const auth = parseAuth(b.auth, now);
    const record = parseDoc('record', b.record, op === 'update' || op === 'delete', op);
    const data = parseDoc('data', b.data, op === 'create' || op === 'update', op);
    const collection = await this.collections.load(caller.project, name);
    const lookups = this.store ? new RuleLookups(recordFetcher(this.store, caller.project)) : undefined;
    const ctx: AccessContext = { keyKind: 'public', auth, now, ...(lookups ? { lookups } : {}) };
    const settle = <T>(evaluate: () => T): Promise<T> | T => (lookups ? lookups.settle(evaluate) : evaluate());
    const missing = collection.rules[op] === undefined;
    const traces = (): LookupTrace[] => lookups?.traces() ?? [];
    if (op === 'read') {
      const result = await settle(() => this.read(ctx, collection, record && asRecord(record, now), missing));
      return { ...result, lookups: traces() };
    }
    let allowed: boolean;
    if (op === 'create') allowed = await settle(() => this.policy.canCreate(ctx, collection, asRecord(data as Doc, now)));
    else if (op === 'delete') allowed = await settle(() => this.policy.canDelete(ctx, collection, asRecord(record as Doc, now)));
    else {
      const before = asRecord(record as Doc, now);
      allowed = await settle(() => this.policy.canUpdate(ctx, collection, before, { ...before, ...(data as Doc) } as RecordDoc));
    }
    return { allowed, operation: op, reason: reasonFor(op, allowed, missing), lookups: traces() };
  }

  /**
   * Checks rules as saving them would (`POST …/collections/{c}/rules/validate`): against `fields`
   * when given (a collection not created yet), else against the stored collection's fields.
   * @throws InvalidRequestError with `details: {field: "rules.<op>", rule, position, reason}`.
   */
  async validate(caller: Caller, name: string, body: unknown): Promise<{ valid: true }> {
    if (caller.keyKind !== 'secret') throw new ForbiddenError('Checking rules needs the secret key.');
    const b = objectParam('body', body ?? {});
    refuseUnknownKeys(b, ['fields', 'rules']);
    const collectionName = parseCollectionName(name);
    const fields = b.fields === undefined ? (await this.collections.load(caller.project, collectionName)).fields : parseFields(b.fields);
    const rules = parseRules(b.rules ?? {});
    const present = Object.fromEntries(Object.entries(rules).filter(([, v]) => v !== null)) as { [k: string]: string };
    this.policy.validateRules({ name: collectionName, fields, rules: present });
    return { valid: true };
  }

  private read(ctx: AccessContext, collection: Collection, record: RecordDoc | undefined, missing: boolean): Omit<SimulationResult, 'lookups'> {
    const residual = this.policy.readFilter(ctx, collection);
    if (record === undefined) {
      const allowed = residual !== false;
      const reason = missing
        ? reasonFor('read', false, true)
        : residual === false
          ? 'The read rule can never hold for this user: every read is refused (403).'
          : residual === true
            ? 'The read rule holds for every record this user reads.'
            : 'Reads are allowed; the store returns only the records that match the residual predicate.';
      return { allowed, operation: 'read', residual, reason };
    }
    const allowed = matchesPredicate(record, residual);
    return { allowed, operation: 'read', residual, reason: reasonFor('read', allowed, missing) };
  }
}

function reasonFor(op: Operation, allowed: boolean, missing: boolean): string {
  if (missing) return `The collection has no ${op} rule, so ${op} is refused to every user (only the secret key may).`;
  return allowed ? `The ${op} rule holds for this user and record.` : `The ${op} rule does not hold for this user and record.`;
}
