/**
 * Record and collection operations over any RecordStore, with the rules engine and a list of
 * the change events published: what the relation contracts drive on every adapter.
 */
import { asProjectId, type ChangeEventInput, type ProjectId, type RecordDoc } from '@plinth/shared';
import type { AuthInfo } from '../src/domain/access-policy';
import type { Caller } from '../src/operations/caller';
import { CollectionOperations } from '../src/operations/collection-operations';
import { RecordOperations } from '../src/operations/record-operations';
import { createRulesPolicy } from '../src/rules';
import type { RecordStore } from '../src/store/record-store';
import { DEFAULT_LIMITS } from '../src/domain/limits';

export const P: ProjectId = asProjectId('proj-relations');
export const SECRET: Caller = { project: P, keyKind: 'secret', auth: null };

export function userCaller(uid: string): Caller {
  const auth: AuthInfo = { uid, email: `${uid}@example.com`, email_verified: true, claims: {}, exp: 1_900_000_000 };
  return { project: P, keyKind: 'public', auth };
}

export interface RelationsHarness {
  store: RecordStore;
  collections: CollectionOperations;
  records: RecordOperations;
  events: ChangeEventInput[];
  /** Creates a collection with the secret key. */
  define(name: string, fields: { [field: string]: unknown }, rules?: { [rule: string]: string }): Promise<void>;
  /** Creates a record (secret key unless `as` is given) and returns it whole. */
  add(name: string, data: { [field: string]: unknown }, as?: Caller): Promise<RecordDoc>;
  /** Every record of the collection in id order, read with the secret key. */
  all(name: string): Promise<RecordDoc[]>;
}

export function relationsHarness(store: RecordStore): RelationsHarness {
  const policy = createRulesPolicy();
  const events: ChangeEventInput[] = [];
  const publish = async (e: ChangeEventInput): Promise<void> => {
    events.push(e);
  };
  const collections = new CollectionOperations(store, policy, () => new Date(), publish);
  const records = new RecordOperations(store, policy, collections, () => new Date(), DEFAULT_LIMITS, publish);
  return {
    store,
    collections,
    records,
    events,
    async define(name, fields, rules = {}) {
      await collections.create(SECRET, { name, fields, rules });
    },
    async add(name, data, as = SECRET) {
      const created = await records.create(as, name, { data }, undefined);
      return (await records.get(SECRET, name, created.record.id)) as RecordDoc;
    },
    async all(name) {
      return (await records.query(SECRET, name, { orderBy: 'id' })).records;
    },
  };
}
