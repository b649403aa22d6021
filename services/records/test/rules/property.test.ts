/**
 * The residual of a read rule selects exactly the records the rule allows in full: the same
 * generated records, rules and users through the reference evaluator and through both real
 * RecordStores (SQLite; MongoDB's filter translation evaluated by mingo). Seeded: every run
 * generates the same cases.
 */
import { asProjectId, type Collection, type JsonValue, type Predicate, type RecordDoc } from '@plinth/shared';
import { createMingoDb } from '@plinth/shared/testing/mingo-db';
import { createRulesPolicy, matchesPredicate } from '../../src/rules';
import { evaluateRule } from '../../src/rules/evaluate';
import { parseRule } from '../../src/rules/parse';
import type { AuthInfo } from '../../src/domain/access-policy';
import { validateNewData } from '../../src/domain/record-data';
import { MongoRecordStore } from '../../src/store/mongo/mongo-record-store';
import type { RecordStore } from '../../src/store/record-store';
import { SqliteRecordStore } from '../../src/store/sqlite/sqlite-record-store';
import { NOW, ctx, postsCollection, user } from './fixtures';

/** mulberry32: a tiny seeded PRNG, so every run generates the same cases. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const random = prng(20261122);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
const MISSING = Symbol('missing');
const maybe = (...values: Array<JsonValue | typeof MISSING>) => pick(values);

/**
 * A user-data object as a client might send it; validateNewData turns it into what the API
 * stores (nulls dropped), so the stores hold exactly these records. The `json` field `meta`
 * carries values of every type, so type mismatches still happen at run time.
 */
function generateData(): { [field: string]: JsonValue } {
  const fields: { [field: string]: JsonValue | typeof MISSING } = {
    owner: maybe('usr_1', 'usr_2', 'usr_3', 'usr_4', null, MISSING),
    team: maybe('red', 'blue', 'green', null, MISSING),
    published: maybe(true, false, null, MISSING),
    score: maybe(-3, 0, 2, 2.5, 3, 5, 10, null, MISSING),
    tags: maybe(['a'], ['a', 'b'], ['c'], [], null, MISSING),
    title: maybe('Hello', 'hello', 'Zeta', '', null, MISSING),
    meta: maybe(['a', 1], ['a'], [1, null], [null], 'a', 1, '3', true, { k: 'a' }, null, MISSING),
    publish_at: maybe('2026-05-31T23:59:59.999Z', '2026-06-01T12:00:00.000Z', '2026-06-02T00:00:00.000Z', null, MISSING),
  };
  const data: { [field: string]: JsonValue } = {};
  for (const [k, v] of Object.entries(fields)) if (v !== MISSING) data[k] = v;
  return data;
}

/** The property test's collection: the rules fixture with `owner` optional, so it may be missing. */
const FIELDS = { ...postsCollection().fields, owner: { type: 'text' as const } };
const collectionWith = (read: string): Collection => ({ ...postsCollection({ read }), fields: FIELDS });

function generateRecord(i: number): RecordDoc {
  return {
    id: `rec_${String(i).padStart(4, '0')}`,
    version: 1 + Math.floor(random() * 4),
    created_at: '2026-05-01T00:00:00.000Z',
    updated_at: '2026-05-01T00:00:00.000Z',
    ...validateNewData(collectionWith('true'), generateData()),
  } as RecordDoc;
}

const ATOMS: ReadonlyArray<() => string> = [
  () => 'record.owner == auth.uid',
  () => 'auth.uid != record.owner',
  () => `record.owner == ${pick(['"usr_1"', '"usr_2"', 'null'])}`,
  () => `record.team ${pick(['==', '!='])} ${pick(['"red"', '"blue"', 'null'])}`,
  () => `record.team in ${pick(['["red", "blue"]', '[null]', '[null, "red"]', '[]', 'auth.claims.teams'])}`,
  () => 'record.published',
  () => `record.published == ${pick(['true', 'false'])}`,
  () => `record.score ${pick(['<', '<=', '>', '>='])} ${pick(['0', '2.5', '3', '-1'])}`,
  () => `${pick(['0', '3'])} ${pick(['<', '<=', '>', '>='])} record.score`,
  // json fields hold anything: type mismatches at run time
  () => `record.meta ${pick(['<', '<=', '>', '>='])} ${pick(['0', '"b"'])}`,
  () => `record.score > auth.claims.level`,
  () => `${pick(['"a"', '"b"', '"z"'])} in record.tags`,
  () => `record.publish_at ${pick(['<', '<=', '>'])} request.time`,
  () => pick(['auth != null', 'auth == null', 'auth.email_verified', 'auth.claims.role == "admin"']),
  () => `record.title ${pick(['==', '!='])} ${pick(['null', '"Hello"'])}`,
  () => `record.title ${pick(['<', '>='])} ${pick(['"Hello"', '"a"'])}`,
  () => `record.meta ${pick(['==', '!='])} ${pick(['"a"', '1', 'null'])}`,
  () => `${pick(['"a"', '1'])} in record.meta`,
  // a json list holding null is not null
  () => `record.meta in ${pick(['[null]', '[null, "a"]', '[null, 1]'])}`,
  () => `!(record.meta ${pick(['== null', 'in [null]', '!= null'])})`,
  () => `record.id in ["rec_0001", "rec_0002", "rec_0100"]`,
  () => `record.version >= ${pick(['2', '3'])}`,
  () => pick(['true', 'false']),
];

function generateRule(depth: number): string {
  const r = random();
  if (depth <= 0 || r < 0.3) return pick(ATOMS)();
  if (r < 0.45) return `!(${generateRule(depth - 1)})`;
  return `(${generateRule(depth - 1)}) ${r < 0.72 ? '&&' : '||'} (${generateRule(depth - 1)})`;
}

const USERS: ReadonlyArray<AuthInfo | null> = [
  null,
  user('usr_1'),
  user('usr_2', { claims: { role: 'admin', teams: ['red', 'green'], level: 2 } }),
  user('usr_3', { email_verified: false, claims: { level: 'high', teams: 'red' } }),
];

const records = Array.from({ length: 300 }, (_, i) => generateRecord(i));
const rules = Array.from({ length: 250 }, () => generateRule(3));
const policy = createRulesPolicy();

const PROJECT = asProjectId('property-test');

/**
 * The ways a residual selects records, each checked against full evaluation of the rule: the
 * reference evaluator, and the two real RecordStores (SQLite, and the MongoDB adapter's filter
 * translation run by mingo) holding the same records.
 */
const SELECTORS: ReadonlyArray<[name: string, open: () => Promise<Selector>]> = [
  ['matchesPredicate', async () => ({ select: async (p) => records.filter((d) => matchesPredicate(d, p)).map((d) => d.id), close: async () => {} })],
  ['SqliteRecordStore', async () => storeSelector(SqliteRecordStore.open(':memory:'))],
  [
    'MongoRecordStore on createMingoDb()',
    async () => {
      const store = new MongoRecordStore(createMingoDb());
      await store.init();
      return storeSelector(store);
    },
  ],
];

interface Selector {
  /** The ids of the records `p` selects, in id order. */
  select: (p: Predicate) => Promise<string[]>;
  close: () => Promise<void>;
}

async function storeSelector(store: RecordStore): Promise<Selector> {
  const collection = collectionWith('true');
  await store.createCollection(PROJECT, collection);
  for (const record of records) await store.insertRecord(PROJECT, collection, record);
  return {
    select: async (predicate) => {
      const rows = await store.queryRecords(PROJECT, collection, { predicate, orderBy: 'id', direction: 'asc', limit: records.length + 1 });
      return rows.map((r) => r.id);
    },
    close: () => store.close(),
  };
}

describe('property: residual predicate ≡ full evaluation (seeded, deterministic)', () => {
  it('generated 300 records and 250 rules over 4 callers', () => {
    expect(new Set(records.map((r) => r.id)).size).toBe(300);
    expect(new Set(rules).size).toBeGreaterThan(200);
  });

  it('generated records are what the API would store (validateNewData accepts them unchanged)', () => {
    for (const { id: _id, version: _v, created_at: _c, updated_at: _u, ...data } of records) {
      expect(validateNewData(collectionWith('true'), data)).toEqual(data);
    }
  });

  it.each(SELECTORS)('%s selects exactly the records the rule allows', async (_name, open) => {
    const selector = await open();
    let nonTrivial = 0;
    const mismatches: string[] = [];
    try {
      for (const rule of rules) {
        const collection = collectionWith(rule);
        policy.validateRules(collection);
        const expr = parseRule(rule);
        for (const auth of USERS) {
          const residual = policy.readFilter(ctx(auth), collection);
          const byRule = records.filter((record) => evaluateRule(expr, { auth, now: NOW, record })).map((r) => r.id);
          const selected = await selector.select(residual);
          if (typeof residual !== 'boolean') nonTrivial += 1;
          if (selected.join() !== byRule.join()) {
            mismatches.push(`${rule} as ${auth?.uid ?? 'anonymous'} → ${JSON.stringify(residual)}`);
          }
        }
      }
    } finally {
      await selector.close();
    }
    expect(mismatches).toEqual([]);
    // The generator must exercise real residuals, not just constant rules.
    expect(nonTrivial).toBeGreaterThan(500);
  });
});
