/**
 * The get()/exists() lookups of one request (docs/rules.md "Lookups"): the caller carries one
 * memo, shared by every rule the request evaluates, and rule checks run through `settleRules` so
 * the records they look up are read (once each) before the synchronous policy decides.
 */
import { NotFoundError, type Collection, type ProjectId, type RecordDoc } from '@plinth/shared';
import type { AccessPolicy } from '../domain/access-policy';
import { RuleLookups, type FetchRecord } from '../rules/rule-lookups';
import type { RecordStore } from '../store/record-store';
import { accessContext, bypassesRules, type Caller } from './caller';

/** Reads a stored record as a lookup sees it: no rules of its own; null when it or its collection is absent. */
export function recordFetcher(store: RecordStore, project: ProjectId): FetchRecord {
  return async (name: string, id: string): Promise<RecordDoc | null> => {
    const collection = await store.getCollection(project, name);
    if (!collection) return null;
    try {
      return await store.getRecord(project, collection, id);
    } catch (err) {
      if (err instanceof NotFoundError) return null; // deleted meanwhile
      throw err;
    }
  };
}

/** `evaluate` once every lookup it makes has been read; at once for the secret key or without lookups. */
export function settleRules<T>(caller: Caller, evaluate: () => T): Promise<T> | T {
  return caller.lookups ? caller.lookups.settle(evaluate) : evaluate();
}

/**
 * The caller with a lookup memo (its own, unless it has one: a batch shares one across its
 * operations), and the read rule's lookups already read, so every later readFilter of the
 * request (list, the answer of a write, a refusal) is synchronous and sees the same records.
 */
export async function withRuleLookups(store: RecordStore, policy: AccessPolicy, caller: Caller, collection: Collection, now: Date): Promise<Caller> {
  if (bypassesRules(caller)) return caller;
  const c: Caller = caller.lookups ? caller : { ...caller, lookups: new RuleLookups(recordFetcher(store, caller.project)) };
  await settleRules(c, () => policy.readFilter(accessContext(c, now), collection));
  return c;
}
