/**
 * The aggregate contract: every RecordStore adapter counts, sums and averages the same records
 * to the same answers — missing and null values skipped, sums of nothing 0, means of nothing
 * null, a value stored before a field's type changed skipped, and the predicate (with or, not,
 * lists and a residual-like `and`) applied exactly as a list applies it.
 */
import { asProjectId, type Collection, type Predicate, type RecordDoc } from '@plinth/shared';
import type { AggregateResult, RecordStore } from '../src/store/record-store';

const P = asProjectId('proj-agg');
const OTHER = asProjectId('proj-agg-other');
const T0 = '2026-01-01T00:00:00.000Z';

const ORDERS: Collection = {
  name: 'orders',
  fields: {
    owner: { type: 'text', indexed: true },
    qty: { type: 'integer', indexed: true },
    price: { type: 'number' },
    tags: { type: 'list' },
    note: { type: 'text' },
  },
  rules: {},
  revision: 1,
  created_at: T0,
  updated_at: T0,
};

function rec(n: number, data: { [k: string]: RecordDoc[string] }): RecordDoc {
  const at = `2026-01-01T00:00:0${n}.000Z`;
  return { id: `rec_0${n}`, version: 1, created_at: at, updated_at: at, ...data };
}

const DATA: RecordDoc[] = [
  rec(1, { owner: 'alice', qty: 2, price: 1.5, tags: ['a'] }),
  rec(2, { owner: 'alice', qty: 3, price: null, tags: [] }),
  rec(3, { owner: 'bob', qty: 5, price: 2.25 }),
  rec(4, { owner: 'bob', price: -1 }),
  rec(5, { owner: 'carol', qty: 0, tags: ['a', 'b'] }),
  rec(6, { note: 'no owner, no numbers' }),
];

/** [label, predicate, sum and avg fields, the answer]. */
const CASES: Array<[string, Predicate, AggregateResult]> = [
  ['everything', true, { count: 6, sum: { qty: 10, price: 2.75 }, avg: { qty: 2.5, price: 2.75 / 3 } }],
  ['nothing', false, { count: 0, sum: { qty: 0, price: 0 }, avg: { qty: null, price: null } }],
  ['equality on an indexed field', ['owner', '==', 'alice'], { count: 2, sum: { qty: 5, price: 1.5 }, avg: { qty: 2.5, price: 1.5 } }],
  ['only missing and null values', ['owner', '==', 'carol'], { count: 1, sum: { qty: 0, price: 0 }, avg: { qty: 0, price: null } }],
  ['a range on the summed field', ['qty', '>', 2], { count: 2, sum: { qty: 8, price: 2.25 }, avg: { qty: 4, price: 2.25 } }],
  ['== null matches missing', ['owner', '==', null], { count: 1, sum: { qty: 0, price: 0 }, avg: { qty: null, price: null } }],
  ['array-contains', ['tags', 'array-contains', 'a'], { count: 2, sum: { qty: 2, price: 1.5 }, avg: { qty: 1, price: 1.5 } }],
  ['not (missing values included)', { not: ['owner', '==', 'bob'] }, { count: 4, sum: { qty: 5, price: 1.5 }, avg: { qty: 5 / 3, price: 1.5 } }],
  [
    'where and a residual',
    { and: [['qty', '>=', 0], { or: [['owner', '==', 'bob'], ['owner', '==', 'carol']] }] },
    { count: 2, sum: { qty: 5, price: 2.25 }, avg: { qty: 2.5, price: 2.25 } },
  ],
];

function close(actual: AggregateResult, expected: AggregateResult): void {
  expect(actual.count).toBe(expected.count);
  for (const kind of ['sum', 'avg'] as const) {
    expect(Object.keys(actual[kind]).sort()).toEqual(Object.keys(expected[kind]).sort());
    for (const [field, value] of Object.entries(expected[kind])) {
      if (value === null) expect(actual[kind][field]).toBeNull();
      else expect(actual[kind][field]).toBeCloseTo(value, 10);
    }
  }
}

export function describeAggregateContract(name: string, makeStore: () => Promise<RecordStore>): void {
  describe(`RecordStore aggregates: ${name}`, () => {
    let store: RecordStore;
    beforeAll(async () => {
      store = await makeStore();
      await store.createCollection(P, ORDERS);
      await store.createCollection(OTHER, ORDERS);
      for (const r of DATA) await store.insertRecord(P, ORDERS, r);
      // Another project's records never count.
      await store.insertRecord(OTHER, ORDERS, rec(7, { owner: 'alice', qty: 100, price: 100 }));
    });
    afterAll(() => store.close());

    it.each(CASES)('%s', async (_label, predicate, expected) => {
      const got = await store.aggregateRecords(P, ORDERS, { predicate, sum: ['qty', 'price'], avg: ['qty', 'price'] });
      close(got, expected);
    });

    it('a count alone has no sums or means', async () => {
      expect(await store.aggregateRecords(P, ORDERS, { predicate: ['owner', '==', 'bob'], sum: [], avg: [] })).toEqual({ count: 2, sum: {}, avg: {} });
    });

    it('an empty collection: count 0, sum 0, avg null', async () => {
      const empty: Collection = { ...ORDERS, name: 'empty' };
      await store.createCollection(P, empty);
      expect(await store.aggregateRecords(P, empty, { predicate: true, sum: ['qty'], avg: ['price'] })).toEqual({
        count: 0,
        sum: { qty: 0 },
        avg: { price: null },
      });
    });

    it('a value stored before the field became a number is skipped, not summed', async () => {
      const before: Collection = { ...ORDERS, name: 'retyped', fields: { ...ORDERS.fields, score: { type: 'text' } } };
      await store.createCollection(P, before);
      await store.insertRecord(P, before, rec(1, { score: '7' }));
      await store.insertRecord(P, before, rec(2, { score: 'high' }));
      const after: Collection = { ...before, fields: { ...before.fields, score: { type: 'number' } }, revision: 2 };
      expect(await store.updateCollection(P, { next: after, expectedRevision: 1, removedFields: [] })).toBe(true);
      await store.insertRecord(P, after, rec(3, { score: 4 }));
      expect(await store.aggregateRecords(P, after, { predicate: true, sum: ['score'], avg: ['score'] })).toEqual({
        count: 3,
        sum: { score: 4 },
        avg: { score: 4 },
      });
    });
  });
}
