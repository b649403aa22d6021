/**
 * The full-text search contract: every RecordStore adapter finds the same records for the same
 * words over the searchable fields — case and diacritics ignored, every word required, words in
 * different fields, non-searchable fields and missing or null values never matching, combined
 * with a predicate (where AND a residual), counted alike — keeps the index in step with inserts,
 * updates and deletes, builds it when a field becomes searchable, and pages through a ranked
 * search by position and through an ordered one by keyset. Ranking itself differs between
 * engines (bm25 on SQLite, MongoDB's text score); only an unambiguous order is checked.
 */
import { asProjectId, type Collection, type Predicate, type RecordDoc } from '@plinth/shared';
import { RANK_ORDER, type RecordQuery, type RecordStore } from '../src/store/record-store';

const P = asProjectId('proj-search');
const T0 = '2026-01-01T00:00:00.000Z';

const BOOKS: Collection = {
  name: 'books',
  fields: {
    title: { type: 'text', searchable: true },
    blurb: { type: 'text', searchable: true },
    isbn: { type: 'text' },
    shelf: { type: 'text', indexed: true },
    tags: { type: 'list' },
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

const DATA: RecordDoc[] = [
  rec(1, { title: 'Apple apple apple', shelf: 'a' }),
  rec(2, { title: 'Cooking', blurb: 'an apple pie and many other recipes for every season of the year', shelf: 'b' }),
  rec(3, { title: 'Le Café de Flore', blurb: 'Paris stories', shelf: 'a' }),
  rec(4, { title: 'Gardening', blurb: null, isbn: 'apple', shelf: 'b', tags: ['apple'] }),
  rec(5, { blurb: 'APPLE orchards or banana farms', shelf: 'c' }),
  rec(6, { title: 'Banana Split', blurb: 'ice cream; apple optional', shelf: 'c' }),
  rec(7, { title: 'Quotes "and" stars* NEAR(things) -minus col:on' }),
];

type Case = [label: string, words: string[], predicate: Predicate, expected: string[]];
const CASES: Case[] = [
  ['one word, any case, both fields', ['apple'], true, ['01', '02', '05', '06']],
  ['diacritics ignored', ['cafe'], true, ['03']],
  ['every word required', ['apple', 'banana'], true, ['05', '06']],
  ['every word required, one missing', ['apple', 'orchards', 'pie'], true, []],
  ['words in different fields', ['banana', 'cream'], true, ['06']],
  ['a non-searchable field or list never matches', ['gardening', 'apple'], true, []],
  ['a word no record holds', ['durian'], true, []],
  ['syntax words are plain words', ['near', 'things', 'minus', 'col', 'on'], true, ['07']],
  ['combined with a predicate', ['apple'], ['shelf', '==', 'c'], ['05', '06']],
  ['combined with where and a residual', ['apple'], { and: [['shelf', '!=', 'a'], { or: [['title', '==', null], ['title', 'starts-with', 'ban']] }] }, ['05', '06']],
  ['a predicate that excludes everything', ['apple'], false, []],
];

const ids = (records: RecordDoc[]): string[] => records.map((r) => r.id.slice(4));

export function describeSearchContract(name: string, makeStore: () => Promise<RecordStore>): void {
  describe(`full-text search contract: ${name}`, () => {
    let store: RecordStore;
    beforeEach(async () => {
      store = await makeStore();
      await store.createCollection(P, BOOKS);
      for (const r of DATA) await store.insertRecord(P, BOOKS, r);
    });
    afterEach(async () => {
      await store.close();
    });

    const search = (words: string[], predicate: Predicate = true, extra: Partial<RecordQuery> = {}): Promise<RecordDoc[]> =>
      store.queryRecords(P, BOOKS, { predicate, search: words, orderBy: 'created_at', direction: 'asc', limit: 100, ...extra });

    it.each(CASES)('%s', async (_label, words, predicate, expected) => {
      expect(ids(await search(words, predicate))).toEqual(expected);
      expect(ids(await search(words, predicate, { orderBy: RANK_ORDER })).sort()).toEqual(expected);
      expect((await store.aggregateRecords(P, BOOKS, { predicate, search: words, sum: [], avg: [] })).count).toBe(expected.length);
    });

    it('ranks a record full of the word before one that mentions it once in a long text', async () => {
      const ranked = ids(await search(['apple'], ['shelf', 'in', ['a', 'b']], { orderBy: RANK_ORDER }));
      expect(ranked).toEqual(['01', '02']);
    });

    it('pages through a ranked search by position, and an ordered one by keyset', async () => {
      const all = ids(await search(['apple'], true, { orderBy: RANK_ORDER }));
      const pages: string[] = [];
      for (let offset = 0; offset < 6; offset += 2) {
        pages.push(...ids(await search(['apple'], true, { orderBy: RANK_ORDER, limit: 2, after: { value: offset, id: '' } })));
      }
      expect(pages).toEqual(all);
      const desc = ids(await search(['apple'], true, { orderBy: 'id', direction: 'desc', limit: 2 }));
      expect(desc).toEqual(['06', '05']);
      const next = ids(await search(['apple'], true, { orderBy: 'id', direction: 'desc', limit: 2, after: { value: 'rec_05', id: 'rec_05' } }));
      expect(next).toEqual(['02', '01']);
    });

    it('keeps the index in step with updates and deletes', async () => {
      await store.replaceRecord(P, BOOKS, { ...(DATA[2] as RecordDoc), version: 2, title: 'Apple Café' }, 1);
      await store.deleteRecord(P, BOOKS, 'rec_05');
      await store.replaceRecord(P, BOOKS, { ...(DATA[0] as RecordDoc), version: 2, title: 'Pears' }, 1);
      expect(ids(await search(['apple']))).toEqual(['02', '03', '06']);
      expect(ids(await search(['pears']))).toEqual(['01']);
      expect(ids(await search(['flore']))).toEqual([]);
    });

    it('builds the index when a field becomes searchable, and drops a field that stops being', async () => {
      const next: Collection = {
        ...BOOKS,
        revision: 2,
        fields: { ...BOOKS.fields, isbn: { type: 'text', searchable: true }, blurb: { type: 'text' } },
      };
      expect(await store.updateCollection(P, { next, expectedRevision: 1, removedFields: [] })).toBe(true);
      const q = (words: string[]) => store.queryRecords(P, next, { predicate: true, search: words, orderBy: 'created_at', direction: 'asc', limit: 100 });
      expect(ids(await q(['apple']))).toEqual(['01', '04']);
      await store.insertRecord(P, next, rec(8, { isbn: 'Apple-123', blurb: 'apple' }));
      expect(ids(await q(['apple']))).toEqual(['01', '04', '08']);
      expect(ids(await q(['season']))).toEqual([]);
    });

    it('a collection deleted and made again starts with an empty index', async () => {
      await store.deleteCollection(P, 'books');
      await store.createCollection(P, BOOKS);
      await store.insertRecord(P, BOOKS, rec(9, { title: 'fresh apple' }));
      expect(ids(await search(['apple']))).toEqual(['09']);
      await store.purgeProject(P);
      await store.createCollection(P, BOOKS);
      expect(ids(await search(['apple']))).toEqual([]);
    });
  });
}
