/**
 * Fields declared `indexed` or `unique` get real indexes, and queries on them do not scan the
 * table: EXPLAIN QUERY PLAN shows an index SEARCH (equality, range, cursor) or an ordered walk of
 * the index with no temporary sort (orderBy).
 */
import { asProjectId, type Collection, type Predicate } from '@plinth/shared';
import { RANK_ORDER, type KeysetPosition, type SortDirection } from '../src/store/record-store';
import { SqliteRecordStore } from '../src/store/sqlite/sqlite-record-store';

const P = asProjectId('plan-test');
const T0 = '2026-01-01T00:00:00.000Z';
const TASKS: Collection = {
  name: 'tasks',
  fields: {
    owner: { type: 'text', indexed: true },
    slug: { type: 'text', unique: true },
    priority: { type: 'integer', indexed: true },
    due: { type: 'timestamp', indexed: true },
    note: { type: 'text' },
  },
  rules: {},
  revision: 1,
  created_at: T0,
  updated_at: T0,
};

let store: SqliteRecordStore;
beforeAll(async () => {
  store = SqliteRecordStore.open(':memory:');
  await store.createCollection(P, TASKS);
});
afterAll(() => store.close());

function plan(predicate: Predicate, orderBy = 'created_at', direction: SortDirection = 'asc', after?: KeysetPosition): string {
  return store.explain(P, TASKS, { predicate, orderBy, direction, limit: 21, ...(after ? { after } : {}) }).join('\n');
}

/** [label, predicate, orderBy, index searched]. Ranges are paired with an orderBy on their field. */
const SEARCHES: Array<[string, Predicate, string, string]> = [
  ['equality on an indexed field, default order', ['owner', '==', 'u1'], 'created_at', 'ic:'],
  ['equality on an indexed field, by id', ['owner', '==', 'u1'], 'id', 'ix:'],
  ['equality on a unique field', ['slug', '==', 'a'], 'created_at', 'ux:'],
  ['range on an indexed integer', ['priority', '>', 3], 'priority', 'ix:'],
  ['range on an indexed timestamp', ['due', '<', T0], 'due', 'ix:'],
];

it.each(SEARCHES)('%s is an index search with no sort', (_label, predicate, orderBy, indexPrefix) => {
  const p = plan(predicate, orderBy, 'desc');
  expect(p).toMatch(new RegExp(`SEARCH rec_plan-test_tasks USING INDEX ${indexPrefix}`));
  expect(p).not.toMatch(/SCAN rec_plan-test_tasks/);
  expect(p).not.toMatch(/TEMP B-TREE/);
});

it('in on an indexed field is an index search', () => {
  const p = plan(['owner', 'in', ['u1', 'u2']], 'id');
  expect(p).toMatch(/SEARCH rec_plan-test_tasks USING INDEX i[xc]:/);
  expect(p).not.toMatch(/SCAN rec_plan-test_tasks/);
});

it.each(['asc', 'desc'] as const)('orderBy an indexed field %s walks the index without sorting', (direction) => {
  const p = plan(true, 'priority', direction);
  expect(p).toMatch(/USING INDEX ix:/);
  expect(p).not.toMatch(/TEMP B-TREE/);
});

it('orderBy created_at (the default) walks its index without sorting', () => {
  const p = plan(true, 'created_at', 'desc');
  expect(p).toMatch(/USING INDEX sys:rec_plan-test_tasks:created_at/);
  expect(p).not.toMatch(/TEMP B-TREE/);
});

const CURSORS: Array<[string, SortDirection, KeysetPosition]> = [
  ['asc after a value', 'asc', { value: 3, id: 'rec_x' }],
  ['desc after a value', 'desc', { value: 3, id: 'rec_x' }],
  ['asc after a missing value', 'asc', { value: null, id: 'rec_x' }],
  ['desc after a missing value', 'desc', { value: null, id: 'rec_x' }],
];

it.each(CURSORS)('a cursor on an indexed order field (%s) seeks into the index, never sorting', (_label, direction, after) => {
  const p = plan(true, 'priority', direction, after);
  expect(p).toMatch(/SEARCH rec_plan-test_tasks USING INDEX ix:/);
  expect(p).not.toMatch(/SCAN rec_plan-test_tasks/);
  expect(p).not.toMatch(/TEMP B-TREE/);
});

it.each(['asc', 'desc'] as const)('a cursor on created_at (%s) seeks into its index', (direction) => {
  const p = plan(true, 'created_at', direction, { value: T0, id: 'rec_x' });
  expect(p).toMatch(/SEARCH rec_plan-test_tasks USING INDEX sys:rec_plan-test_tasks:created_at/);
  expect(p).not.toMatch(/TEMP B-TREE/);
});

it('a field that is not indexed is scanned (the check above can fail)', () => {
  expect(plan(['note', '==', 'x'], 'id')).toMatch(/SCAN rec_plan-test_tasks/);
  expect(plan(true, 'note')).toMatch(/TEMP B-TREE/);
});

describe('a count whose where is on indexed fields reads no record bodies', () => {
  const count = (predicate: Predicate): string => store.explain(P, TASKS, { aggregate: { predicate, sum: [], avg: [] } }).join('\n');

  it.each<[string, Predicate]>([
    ['equality', ['owner', '==', 'u1']],
    ['a range', ['priority', '>', 3]],
    ['in', ['owner', 'in', ['u1', 'u2']]],
  ])('%s: a covering index search', (_label, predicate) => {
    const p = count(predicate);
    expect(p).toMatch(/SEARCH rec_plan-test_tasks USING COVERING INDEX (ix|ic|ux):/);
    expect(p).not.toMatch(/SCAN rec_plan-test_tasks/);
  });

  it('a sum reads the bodies (the summed field is not in the index)', () => {
    const p = store.explain(P, TASKS, { aggregate: { predicate: ['owner', '==', 'u1'], sum: ['priority'], avg: [] } }).join('\n');
    expect(p).toMatch(/SEARCH rec_plan-test_tasks USING INDEX/);
    expect(p).not.toMatch(/COVERING/);
  });
});

describe('a search that nothing but its words filters reads only the records of its page', () => {
  const ARTICLES: Collection = { ...TASKS, name: 'articles', fields: { title: { type: 'text', searchable: true }, shelf: { type: 'text' } } };
  const at = (n: number): string => `2026-01-01T00:00:0${n}.000Z`;
  beforeAll(async () => {
    await store.createCollection(P, ARTICLES);
    // Written in an order that is not the ids' order, all with the same text: every rank ties.
    for (const [n, id] of [[1, 'rec_c'], [2, 'rec_a'], [3, 'rec_b']] as const) {
      await store.insertRecord(P, ARTICLES, { id, version: 1, created_at: at(n), updated_at: at(n), title: 'plain apple', shelf: 's' });
    }
  });
  const ranked = (predicate: Predicate) => ({ predicate, search: ['apple'], orderBy: RANK_ORDER, direction: 'asc' as const, limit: 10 });

  it('ranked: the page is taken from the index, then only its records are read', () => {
    const p = store.explain(P, ARTICLES, ranked(true)).join('\n');
    expect(p).toMatch(/(CO-ROUTINE|MATERIALIZE) m/);
    expect(store.explain(P, ARTICLES, ranked(['shelf', '==', 's'])).join('\n')).not.toMatch(/(CO-ROUTINE|MATERIALIZE) m/);
  });

  it('a count is answered by the index alone', () => {
    const p = store.explain(P, ARTICLES, { aggregate: { predicate: true, search: ['apple'], sum: [], avg: [] } }).join('\n');
    expect(p).toMatch(/VIRTUAL TABLE/);
    expect(p).not.toMatch(/(SCAN|SEARCH) rec_plan-test_articles/);
  });

  it('ties keep the order the records were written in, whether a filter applies or not', async () => {
    const ids = async (predicate: Predicate) => (await store.queryRecords(P, ARTICLES, ranked(predicate))).map((r) => r.id);
    expect(await ids(true)).toEqual(['rec_c', 'rec_a', 'rec_b']);
    expect(await ids(['shelf', '==', 's'])).toEqual(['rec_c', 'rec_a', 'rec_b']);
    const second = await store.queryRecords(P, ARTICLES, { ...ranked(true), limit: 2, after: { value: 1, id: '' } });
    expect(second.map((r) => r.id)).toEqual(['rec_a', 'rec_b']);
  });
});
