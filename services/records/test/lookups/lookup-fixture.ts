/** A records service without HTTP (operations over an in-memory SQLite store and the real rules engine) for lookup tests. */
import { asProjectId, type RecordDoc } from '@plinth/shared';
import type { AuthInfo } from '../../src/domain/access-policy';
import type { Caller } from '../../src/operations/caller';
import { CollectionOperations } from '../../src/operations/collection-operations';
import { RecordOperations } from '../../src/operations/record-operations';
import { RuleSimulation } from '../../src/operations/rule-simulation';
import { createRulesPolicy } from '../../src/rules';
import { SqliteRecordStore } from '../../src/store/sqlite/sqlite-record-store';

export const PROJECT = asProjectId('lookups');

export function user(uid: string, claims: AuthInfo['claims'] = {}): Caller {
  return { project: PROJECT, keyKind: 'public', auth: { uid, email: null, email_verified: false, claims, exp: Math.floor(Date.now() / 1000) + 3600 } };
}

export const SECRET: Caller = { project: PROJECT, keyKind: 'secret', auth: null };

export function lookupService() {
  const store = SqliteRecordStore.open(':memory:');
  const policy = createRulesPolicy();
  const collections = new CollectionOperations(store, policy);
  const records = new RecordOperations(store, policy, collections);
  const simulation = new RuleSimulation(collections, policy, undefined, store);
  /** Record reads by collection name, counted (memoization shows as one read). */
  const reads = new Map<string, number>();
  const getRecord = store.getRecord.bind(store);
  store.getRecord = async (project, collection, id) => {
    reads.set(collection.name, (reads.get(collection.name) ?? 0) + 1);
    return getRecord(project, collection, id);
  };
  const create = async (collection: string, data: object): Promise<RecordDoc> =>
    (await records.create(SECRET, collection, { data }, undefined)).record as RecordDoc;
  return { store, collections, records, simulation, reads, create, close: () => store.close() };
}
