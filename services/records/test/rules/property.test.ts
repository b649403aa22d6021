import { find } from 'mingo';
import type { JsonValue, Predicate, RecordDoc } from '@plinth/shared';
import { createRulesPolicy, matchesPredicate } from '../../src/rules';
import { evaluateRule } from '../../src/rules/evaluate';
import { parseRule } from '../../src/rules/parse';
import type { AuthInfo } from '../../src/domain/access-policy';
import { predicateToMongoFilter } from './predicate-to-mongo-filter';
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

function generateRecord(i: number): RecordDoc {
  const doc: { [field: string]: JsonValue } = {
    id: `rec_${String(i).padStart(4, '0')}`,
    version: 1 + Math.floor(random() * 4),
    created_at: '2026-05-01T00:00:00.000Z',
    updated_at: '2026-05-01T00:00:00.000Z',
  };
  const fields: { [field: string]: JsonValue | typeof MISSING } = {
    owner: maybe('usr_1', 'usr_2', 'usr_3', 'usr_4', null, 7, MISSING),
    team: maybe('red', 'blue', 'green', null, MISSING),
    published: maybe(true, false, null, 'yes', MISSING),
    score: maybe(-3, 0, 2, 2.5, 3, 5, 10, '3', null, MISSING),
    tags: maybe(['a'], ['a', 'b'], ['c'], [], 'a', null, MISSING),
    title: maybe('Hello', 'hello', 'Zeta', '', null, MISSING),
    meta: maybe(['a', 1], ['a'], 'a', 1, null, MISSING),
    publish_at: maybe('2026-05-31T23:59:59.999Z', '2026-06-01T12:00:00.000Z', '2026-06-02T00:00:00.000Z', null, MISSING),
  };
  for (const [k, v] of Object.entries(fields)) if (v !== MISSING) doc[k] = v;
  return doc as RecordDoc;
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

/**
 * The ways a residual selects records, each checked against full evaluation. Add the stores'
 * own translators here (the records service's mongo filter and sqlite SQL).
 */
const SELECTORS: ReadonlyArray<[name: string, select: (docs: RecordDoc[], p: Predicate) => RecordDoc[]]> = [
  ['matchesPredicate', (docs, p) => docs.filter((d) => matchesPredicate(d, p))],
  ['test Mongo filter in mingo', (docs, p) => find(docs, predicateToMongoFilter(p)).all() as RecordDoc[]],
];

describe('property: residual predicate ≡ full evaluation (seeded, deterministic)', () => {
  it('generated 300 records and 250 rules over 4 callers', () => {
    expect(new Set(records.map((r) => r.id)).size).toBe(300);
    expect(new Set(rules).size).toBeGreaterThan(200);
  });

  it.each(SELECTORS)('%s selects exactly the records the rule allows', (_name, select) => {
    let nonTrivial = 0;
    const mismatches: string[] = [];
    for (const rule of rules) {
      const collection = postsCollection({ read: rule });
      policy.validateRules(collection);
      const expr = parseRule(rule);
      for (const auth of USERS) {
        const residual = policy.readFilter(ctx(auth), collection);
        const byRule = records.filter((record) => evaluateRule(expr, { auth, now: NOW, record })).map((r) => r.id);
        const selected = select(records, residual).map((r) => r.id);
        if (typeof residual !== 'boolean') nonTrivial += 1;
        if (selected.join() !== byRule.join()) {
          mismatches.push(`${rule} as ${auth?.uid ?? 'anonymous'} → ${JSON.stringify(residual)}`);
        }
      }
    }
    expect(mismatches).toEqual([]);
    // The generator must exercise real residuals, not just constant rules.
    expect(nonTrivial).toBeGreaterThan(500);
  });
});
