/**
 * The text-operator contract: `contains` and `starts-with` give the same answers on every
 * RecordStore adapter, and the same as the reference evaluator (`matchesPredicate`, which
 * realtime uses to match events) — ASCII case ignored, other letters compared as they are,
 * user text never a pattern (`%`, `_`, `\`, `.*`, `(a+)+`, `[`, `^`, `$`), missing and null
 * values never matching (and `not` matching them), list fields never matching, a json field
 * matching only when it holds a string.
 */
import { asProjectId, matchesPredicate, type Collection, type Predicate, type RecordDoc } from '@plinth/shared';
import type { RecordStore } from '../src/store/record-store';

const P = asProjectId('proj-text');
const T0 = '2026-01-01T00:00:00.000Z';

export const NOTES: Collection = {
  name: 'notes',
  fields: {
    title: { type: 'text', indexed: true },
    body: { type: 'text' },
    tags: { type: 'list' },
    meta: { type: 'json' },
    at: { type: 'timestamp' },
  },
  rules: {},
  revision: 1,
  created_at: T0,
  updated_at: T0,
};

function rec(n: number, data: { [k: string]: RecordDoc[string] }): RecordDoc {
  const at = `2026-01-01T00:00:${String(n).padStart(2, '0')}.000Z`;
  return { id: `rec_${String(n).padStart(2, '0')}`, version: 1, created_at: at, updated_at: at, ...data };
}

export const NOTE_DATA: RecordDoc[] = [
  rec(1, { title: 'Buy Milk', body: 'two litres, 50% off', tags: ['milk'], meta: 'Milk run', at: '2026-03-01T10:00:00.000Z' }),
  rec(2, { title: 'buy bread', body: 'rye_bread or a_b', tags: ['Buy bread'], meta: ['buy bread'] }),
  rec(3, { title: 'Émile à Paris', body: 'path C:\\temp\\x', meta: { title: 'buy' } }),
  rec(4, { title: 'émile', body: 'regex .* (a+)+ [x] ^$ | end' }),
  rec(5, { body: 'no title here' }),
  rec(6, { title: 'CALL BOB 📞 today', body: null, meta: 5 }),
  rec(7, { title: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!', body: 'line one\nline two' }),
];

export const TEXT_OPERATOR_CASES: Array<[string, Predicate, string[]]> = [
  ['contains ignores ASCII case', ['title', 'contains', 'BUY'], ['01', '02']],
  ['starts-with ignores ASCII case', ['title', 'starts-with', 'buy b'], ['02']],
  ['contains in the middle', ['title', 'contains', 'ilk'], ['01']],
  ['starts-with is anchored', ['title', 'starts-with', 'milk'], []],
  ['non-ASCII letters keep their case', ['title', 'starts-with', 'émile'], ['04']],
  ['non-ASCII letters, other case', ['title', 'contains', 'émile'], ['04']],
  ['ASCII folded beside a non-ASCII letter', ['title', 'contains', 'ÉMILE'], ['03']],
  ['an emoji', ['title', 'contains', '📞 TO'], ['06']],
  ['% is not a wildcard', ['body', 'contains', '50%'], ['01']],
  ['% alone', ['body', 'contains', '%'], ['01']],
  ['_ is not a wildcard', ['body', 'starts-with', 'rye_'], ['02']],
  ['_ does not match another character', ['body', 'starts-with', 'ry__'], []],
  ['a backslash', ['body', 'contains', 'C:\\temp'], ['03']],
  ['regex syntax is literal', ['body', 'contains', '.* (a+)+ [x] ^$ |'], ['04']],
  ['.* is not a wildcard', ['body', 'starts-with', '.*'], []],
  ['a pathological pattern is only text', ['title', 'contains', '(a+)+$'], []],
  ['a newline', ['body', 'contains', 'one\nline'], ['07']],
  ['^ is not an anchor', ['title', 'contains', '^Buy'], []],
  ['empty operand: every present string', ['title', 'contains', ''], ['01', '02', '03', '04', '06', '07']],
  ['missing and null never match', ['body', 'contains', ''], ['01', '02', '03', '04', '05', '07']],
  ['not contains matches missing and null', { not: ['body', 'contains', 'HERE'] }, ['01', '02', '03', '04', '06', '07']],
  ['json field holding a string', ['meta', 'contains', 'milk'], ['01']],
  ['json list or object never matches', ['meta', 'starts-with', 'buy'], []],
  ['json number never matches', ['meta', 'contains', '5'], []],
  ['list field never matches', ['tags', 'contains', 'milk'], []],
  ['timestamp field', ['at', 'starts-with', '2026-03'], ['01']],
  ['id', ['id', 'starts-with', 'REC_0'], ['01', '02', '03', '04', '05', '06', '07']],
  ['or and and', { or: [['title', 'starts-with', 'call'], { and: [['title', 'contains', 'buy'], ['body', 'contains', 'RYE']] }] }, ['02', '06']],
  ['a non-string operand never matches', ['title', 'contains', 5], []],
];

const ids = (records: RecordDoc[]): string[] => records.map((r) => r.id.slice(4));

export function describeTextOperatorContract(name: string, makeStore: () => Promise<RecordStore>): void {
  describe(`text operators contract: ${name}`, () => {
    let store: RecordStore;
    beforeAll(async () => {
      store = await makeStore();
      await store.createCollection(P, NOTES);
      for (const r of NOTE_DATA) await store.insertRecord(P, NOTES, r);
    });
    afterAll(async () => {
      await store.close();
    });

    it.each(TEXT_OPERATOR_CASES)('%s', async (_label, predicate, expected) => {
      const found = ids(await store.queryRecords(P, NOTES, { predicate, orderBy: 'created_at', direction: 'asc', limit: 100 }));
      expect(found).toEqual(expected);
      // The reference evaluator (realtime matching) gives the same answer.
      expect(NOTE_DATA.filter((r) => matchesPredicate(r, predicate)).map((r) => r.id.slice(4))).toEqual(expected);
      // A count is the length of the list.
      const counted = await store.aggregateRecords(P, NOTES, { predicate, sum: [], avg: [] });
      expect(counted.count).toBe(expected.length);
    });

    it('pages through a contains query with keyset positions', async () => {
      const predicate: Predicate = ['title', 'contains', 'i'];
      const seen: string[] = [];
      let after: { value: RecordDoc[string]; id: string } | undefined;
      for (;;) {
        const page = await store.queryRecords(P, NOTES, { predicate, orderBy: 'title', direction: 'desc', limit: 2, ...(after ? { after } : {}) });
        seen.push(...ids(page));
        const last = page[page.length - 1];
        if (page.length < 2 || !last) break;
        after = { value: last.title ?? null, id: last.id };
      }
      expect(seen).toEqual(['04', '03', '01']);
    });
  });
}
