/**
 * The RecordStore contract (docs/architecture.md "Ports and adapters"): every adapter runs exactly these tests over the same
 * documents and must give the same answers — every operator, sorts in both directions on
 * several field types (missing values included), keyset pagination, compare-and-set, unique
 * conflicts and idempotency keys.
 */
import { asProjectId, ConflictError, type Collection, type Predicate, type RecordDoc } from '@plinth/shared';
import { matchesPredicate } from '../src/rules';
import type { KeysetPosition, RecordQuery, RecordStore, SortDirection } from '../src/store/record-store';
import { splitRecord } from '../src/store/record-shape';
import { describeRecordStoreEdges } from './record-store-edges.contract';

const P = asProjectId('proj-a');
const OTHER = asProjectId('proj-b');
const T0 = '2026-01-01T00:00:00.000Z';

const PEOPLE: Collection = {
  name: 'people',
  fields: {
    name: { type: 'text', required: true, indexed: true },
    email: { type: 'text', unique: true },
    age: { type: 'integer', indexed: true },
    score: { type: 'number' },
    active: { type: 'boolean' },
    born: { type: 'timestamp' },
    tags: { type: 'list' },
    meta: { type: 'json' },
  },
  rules: {},
  revision: 1,
  created_at: T0,
  updated_at: T0,
};

function rec(n: number, created: string, data: { [k: string]: RecordDoc[string] }, version = 1): RecordDoc {
  return { id: `rec_0${n}`, version, created_at: created, updated_at: created, ...data };
}

/** r03 and r04 share created_at, so the id tie-break decides their order. */
const DATA: RecordDoc[] = [
  rec(1, '2026-01-01T00:00:01.000Z', { name: 'ann', email: 'ann@x.io', age: 30, score: 1.5, active: true, born: '1990-01-01T00:00:00.000Z', tags: ['a', 'b'], meta: { k: 1 } }),
  rec(2, '2026-01-01T00:00:02.000Z', { name: 'bob', email: 'bob@x.io', age: 25, score: 2.5, active: false, born: '1985-06-01T00:00:00.000Z', tags: ['b'], meta: true }),
  rec(3, '2026-01-01T00:00:03.000Z', { name: 'cid', age: 30, active: true, tags: [], meta: 5 }),
  rec(4, '2026-01-01T00:00:03.000Z', { name: 'dan', email: 'dan@x.io', score: 0.5, born: '2000-01-01T00:00:00.000Z', tags: ['c', 1, true], meta: 'x' }),
  rec(5, '2026-01-01T00:00:05.000Z', { name: 'eve', email: 'eve@x.io', age: 41, score: 2.5, active: false, born: '1990-01-01T00:00:00.000Z', tags: ['a'], meta: [1, 'a'] }, 3),
  rec(6, '2026-01-01T00:00:06.000Z', { name: 'Ann', age: 25, score: -1, active: true, born: '1970-01-01T00:00:00.000Z', meta: 1 }),
];

const ids = (records: RecordDoc[]): string[] => records.map((r) => r.id.replace('rec_0', 'r'));

function query(predicate: Predicate, orderBy = 'created_at', direction: SortDirection = 'asc', limit = 100, after?: KeysetPosition): RecordQuery {
  return { predicate, orderBy, direction, limit, ...(after ? { after } : {}) };
}

const OPERATOR_CASES: Array<[string, Predicate, string[]]> = [
  ['== text', ['name', '==', 'ann'], ['r1']],
  ['== null matches missing', ['age', '==', null], ['r4']],
  ['!= value matches missing', ['age', '!=', 30], ['r2', 'r4', 'r5', 'r6']],
  ['!= null', ['email', '!=', null], ['r1', 'r2', 'r4', 'r5']],
  ['< integer', ['age', '<', 30], ['r2', 'r6']],
  ['<= integer', ['age', '<=', 30], ['r1', 'r2', 'r3', 'r6']],
  ['> integer', ['age', '>', 30], ['r5']],
  ['>= integer', ['age', '>=', 30], ['r1', 'r3', 'r5']],
  ['< number (negative)', ['score', '<', 1], ['r4', 'r6']],
  ['< text is binary (upper case first)', ['name', '<', 'b'], ['r1', 'r6']],
  ['>= timestamp', ['born', '>=', '1990-01-01T00:00:00.000Z'], ['r1', 'r4', 'r5']],
  ['< timestamp', ['born', '<', '1990-01-01T00:00:00.000Z'], ['r2', 'r6']],
  ['in number', ['score', 'in', [2.5, 0.5]], ['r2', 'r4', 'r5']],
  ['not-in matches missing', ['score', 'not-in', [2.5]], ['r1', 'r3', 'r4', 'r6']],
  ['not-in integer', ['age', 'not-in', [30, 25]], ['r4', 'r5']],
  ['== boolean true', ['active', '==', true], ['r1', 'r3', 'r6']],
  ['== boolean false', ['active', '==', false], ['r2', 'r5']],
  ['!= boolean true matches missing', ['active', '!=', true], ['r2', 'r4', 'r5']],
  ['array-contains text', ['tags', 'array-contains', 'a'], ['r1', 'r5']],
  ['array-contains number is typed', ['tags', 'array-contains', 1], ['r4']],
  ['array-contains boolean is typed', ['tags', 'array-contains', true], ['r4']],
  ['array-contains "1" does not match 1', ['tags', 'array-contains', '1'], []],
  ['array-contains-any', ['tags', 'array-contains-any', ['b', 'c']], ['r1', 'r2', 'r4']],
  ['id in', ['id', 'in', ['rec_02', 'rec_05']], ['r2', 'r5']],
  ['version >', ['version', '>', 1], ['r5']],
  ['created_at >', ['created_at', '>', '2026-01-01T00:00:03.000Z'], ['r5', 'r6']],
  ['or', { or: [['name', '==', 'ann'], ['age', '>', 40]] }, ['r1', 'r5']],
  ['and', { and: [['active', '==', true], ['age', '==', 30]] }, ['r1', 'r3']],
  ['not == includes missing', { not: ['age', '==', 30] }, ['r2', 'r4', 'r5', 'r6']],
  ['not > includes missing', { not: ['age', '>', 26] }, ['r2', 'r4', 'r6']],
  ['not in', { not: ['score', 'in', [2.5]] }, ['r1', 'r3', 'r4', 'r6']],
  ['true', true, ['r1', 'r2', 'r3', 'r4', 'r5', 'r6']],
  ['false', false, []],
  ['empty and', { and: [] }, ['r1', 'r2', 'r3', 'r4', 'r5', 'r6']],
  ['empty or', { or: [] }, []],
];

/**
 * Predicates whose answer comes from Predicate semantics rather than from the where parser's
 * checks — values of another type (as rules may produce from claims), json fields holding any
 * JSON, null inside `in` — checked against the reference evaluator `matchesPredicate`.
 */
const weird = (v: unknown): string => v as string;
const REFERENCE_CASES: Predicate[] = [
  ['meta', '==', true],
  ['meta', '==', 1],
  ['meta', '==', 5],
  ['meta', '==', 'x'],
  ['meta', '!=', 1],
  ['meta', '==', null],
  ['meta', '>', 2],
  ['meta', '<', 'y'],
  ['meta', 'in', [1, 'x', true]],
  ['meta', 'not-in', [5]],
  ['meta', 'array-contains', 1],
  ['meta', 'array-contains-any', ['a', 'zz']],
  ['age', '==', '30'],
  ['age', '!=', '30'],
  ['active', '==', 1],
  ['score', '==', true],
  ['active', '>', false],
  ['active', '<=', true],
  ['name', '>', 5],
  ['age', 'in', ['30', 30]],
  ['age', 'not-in', ['30']],
  ['age', 'in', [null, 25]],
  ['age', 'not-in', [null, 25]],
  ['email', 'in', [null]],
  ['tags', '==', 'a'],
  ['tags', '!=', 'a'],
  ['tags', 'in', ['a']],
  ['tags', 'not-in', ['a']],
  ['tags', '==', null],
  ['name', 'array-contains', 'ann'],
  ['age', '==', weird({ $ne: null })],
  ['age', '!=', weird(['x'])],
  ['age', 'in', [weird({ a: 1 }), 30]],
  ['version', '==', '1'],
  ['id', '>', 3],
  ['created_at', '==', 5],
  { not: ['active', '>', false] },
  { or: [['meta', '==', true], ['age', 'in', [null]]] },
  { and: [['tags', 'array-contains', 'b'], { not: ['meta', '==', null] }] },
];

/** Null comparisons must not look inside a json list: `[1, null]` is not null. */
const NULL_ON_LISTS: Predicate[] = [
  ['meta', '==', null],
  ['meta', '!=', null],
  ['meta', 'in', [null]],
  ['meta', 'not-in', [null]],
  ['meta', 'in', [null, 1]],
  ['meta', 'not-in', [null, 5]],
  { not: ['meta', '==', null] },
  { not: ['meta', 'in', [null]] },
];

const SORT_CASES: Array<[string, SortDirection, string[]]> = [
  ['created_at', 'asc', ['r1', 'r2', 'r3', 'r4', 'r5', 'r6']],
  ['created_at', 'desc', ['r6', 'r5', 'r4', 'r3', 'r2', 'r1']],
  ['id', 'desc', ['r6', 'r5', 'r4', 'r3', 'r2', 'r1']],
  ['version', 'desc', ['r5', 'r6', 'r4', 'r3', 'r2', 'r1']],
  ['name', 'asc', ['r6', 'r1', 'r2', 'r3', 'r4', 'r5']],
  ['name', 'desc', ['r5', 'r4', 'r3', 'r2', 'r1', 'r6']],
  ['age', 'asc', ['r4', 'r2', 'r6', 'r1', 'r3', 'r5']],
  ['age', 'desc', ['r5', 'r3', 'r1', 'r6', 'r2', 'r4']],
  ['score', 'asc', ['r3', 'r6', 'r4', 'r1', 'r2', 'r5']],
  ['score', 'desc', ['r5', 'r2', 'r1', 'r4', 'r6', 'r3']],
  ['born', 'asc', ['r3', 'r6', 'r2', 'r1', 'r5', 'r4']],
  ['born', 'desc', ['r4', 'r5', 'r1', 'r2', 'r6', 'r3']],
  ['active', 'asc', ['r4', 'r2', 'r5', 'r1', 'r3', 'r6']],
  ['active', 'desc', ['r6', 'r3', 'r1', 'r5', 'r2', 'r4']],
];

/** Walks every page with keyset positions, as the service's cursors do. */
async function walk(store: RecordStore, predicate: Predicate, orderBy: string, direction: SortDirection, limit: number): Promise<string[]> {
  const seen: RecordDoc[] = [];
  let after: KeysetPosition | undefined;
  for (let page = 0; page < 50; page++) {
    const rows = await store.queryRecords(P, PEOPLE, query(predicate, orderBy, direction, limit, after));
    seen.push(...rows);
    const last = rows[rows.length - 1];
    if (rows.length < limit || !last) break;
    after = { value: last[orderBy] ?? null, id: last.id };
  }
  return ids(seen);
}

export function describeRecordStoreContract(name: string, makeStore: () => Promise<RecordStore>): void {
  describe(`RecordStore contract: ${name}`, () => {
    let store: RecordStore;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    async function seed(): Promise<void> {
      await store.createCollection(P, PEOPLE);
      for (const r of DATA) await store.insertRecord(P, PEOPLE, r);
    }

    describe('collections', () => {
      it('creates, lists by name, gets, and keeps projects apart', async () => {
        await store.createCollection(P, { ...PEOPLE, name: 'zoo' });
        await store.createCollection(P, PEOPLE);
        expect((await store.listCollections(P)).map((c) => c.name)).toEqual(['people', 'zoo']);
        expect(await store.getCollection(P, 'people')).toEqual(PEOPLE);
        expect(await store.getCollection(OTHER, 'people')).toBeNull();
        expect(await store.listCollections(OTHER)).toEqual([]);
      });

      it('refuses a second collection of the same name with ConflictError', async () => {
        await store.createCollection(P, PEOPLE);
        await expect(store.createCollection(P, PEOPLE)).rejects.toThrow(ConflictError);
        await store.createCollection(OTHER, PEOPLE);
      });

      it('saves a change only at the expected revision', async () => {
        await store.createCollection(P, PEOPLE);
        const next = { ...PEOPLE, revision: 2, rules: { read: 'true' } };
        expect(await store.updateCollection(P, { next, expectedRevision: 1, removedFields: [] })).toBe(true);
        expect(await store.updateCollection(P, { next: { ...next, revision: 3 }, expectedRevision: 1, removedFields: [] })).toBe(false);
        expect(await store.getCollection(P, 'people')).toEqual(next);
        expect(await store.updateCollection(P, { next: { ...next, name: 'ghost' }, expectedRevision: 2, removedFields: [] })).toBe(false);
      });

      it('removes the values of removed fields from every record', async () => {
        await seed();
        const { score: _removed, ...fields } = PEOPLE.fields;
        const next = { ...PEOPLE, fields, revision: 2 };
        expect(await store.updateCollection(P, { next, expectedRevision: 1, removedFields: ['score'] })).toBe(true);
        const r1 = await store.getRecord(P, next, 'rec_01');
        expect(r1).not.toHaveProperty('score');
        expect(r1).toMatchObject({ name: 'ann', age: 30 });
      });

      it('refuses a new unique field over duplicate values and changes nothing', async () => {
        await seed();
        const next = { ...PEOPLE, revision: 2, fields: { ...PEOPLE.fields, score: { type: 'number' as const, unique: true } } };
        await expect(store.updateCollection(P, { next, expectedRevision: 1, removedFields: [] })).rejects.toThrow(ConflictError);
        expect((await store.getCollection(P, 'people'))?.revision).toBe(1);
        await store.insertRecord(P, PEOPLE, rec(7, T0, { name: 'gus', score: 2.5 }));
      });

      it('enforces a unique field added later', async () => {
        await seed();
        const next = { ...PEOPLE, revision: 2, fields: { ...PEOPLE.fields, name: { type: 'text' as const, unique: true } } };
        expect(await store.updateCollection(P, { next, expectedRevision: 1, removedFields: [] })).toBe(true);
        await expect(store.insertRecord(P, next, rec(7, T0, { name: 'bob' }))).rejects.toThrow(ConflictError);
      });

      it('deletes a collection with its records', async () => {
        await seed();
        expect(await store.deleteCollection(P, 'people')).toBe(true);
        expect(await store.deleteCollection(P, 'people')).toBe(false);
        expect(await store.getCollection(P, 'people')).toBeNull();
        await store.createCollection(P, PEOPLE);
        expect(await store.queryRecords(P, PEOPLE, query(true))).toEqual([]);
      });
    });

    describe('records', () => {
      it('stores and returns a record exactly, and null when absent', async () => {
        await seed();
        expect(await store.getRecord(P, PEOPLE, 'rec_01')).toEqual(DATA[0]);
        expect(await store.getRecord(P, PEOPLE, 'rec_99')).toBeNull();
        await store.createCollection(OTHER, PEOPLE);
        expect(await store.getRecord(OTHER, PEOPLE, 'rec_01')).toBeNull();
      });

      it('raises ConflictError naming the field on a duplicate unique value, on insert and on replace', async () => {
        await seed();
        const dup = store.insertRecord(P, PEOPLE, rec(7, T0, { name: 'x', email: 'ann@x.io' }));
        await expect(dup).rejects.toThrow(ConflictError);
        await expect(dup).rejects.toMatchObject({ details: { field: 'email' } });
        const r2 = DATA[1] as RecordDoc;
        const replace = store.replaceRecord(P, PEOPLE, { ...r2, version: 2, email: 'eve@x.io' }, 1);
        await expect(replace).rejects.toMatchObject({ code: 'conflict', details: { field: 'email' } });
        expect(await store.getRecord(P, PEOPLE, 'rec_02')).toEqual(r2);
      });

      it('lets any number of records leave a unique field empty', async () => {
        await seed();
        await store.insertRecord(P, PEOPLE, rec(7, T0, { name: 'gus' }));
        expect(ids(await store.queryRecords(P, PEOPLE, query(['email', '==', null])))).toEqual(['r7', 'r3', 'r6']);
      });

      it('replaces only at the expected version (compare-and-set)', async () => {
        await seed();
        const r1 = DATA[0] as RecordDoc;
        const next = { ...r1, version: 2, updated_at: '2026-02-01T00:00:00.000Z', name: 'anne' };
        expect(await store.replaceRecord(P, PEOPLE, next, 1)).toEqual(next);
        expect(await store.replaceRecord(P, PEOPLE, { ...next, version: 3, name: 'stale' }, 1)).toBeNull();
        expect(await store.getRecord(P, PEOPLE, 'rec_01')).toEqual(next);
        expect(await store.replaceRecord(P, PEOPLE, { ...next, id: 'rec_99' }, 1)).toBeNull();
      });

      it('lets exactly one of two racing replaces with the same version win', async () => {
        await seed();
        const r1 = DATA[0] as RecordDoc;
        const results = await Promise.all([
          store.replaceRecord(P, PEOPLE, { ...r1, version: 2, name: 'one' }, 1),
          store.replaceRecord(P, PEOPLE, { ...r1, version: 2, name: 'two' }, 1),
        ]);
        expect(results.filter((r) => r !== null)).toHaveLength(1);
        expect((await store.getRecord(P, PEOPLE, 'rec_01'))?.version).toBe(2);
      });

      it('drops a removed field on replace', async () => {
        await seed();
        const { age: _gone, ...r1 } = DATA[0] as RecordDoc;
        await store.replaceRecord(P, PEOPLE, { ...r1, version: 2 }, 1);
        expect(await store.getRecord(P, PEOPLE, 'rec_01')).not.toHaveProperty('age');
        expect(ids(await store.queryRecords(P, PEOPLE, query(['age', '==', null])))).toEqual(['r1', 'r4']);
      });

      it('deletes, with and without a version precondition', async () => {
        await seed();
        expect(await store.deleteRecord(P, PEOPLE, 'rec_05', 1)).toBe(false);
        expect(await store.deleteRecord(P, PEOPLE, 'rec_05', 3)).toBe(true);
        expect(await store.deleteRecord(P, PEOPLE, 'rec_01')).toBe(true);
        expect(await store.deleteRecord(P, PEOPLE, 'rec_01')).toBe(false);
        expect(await store.getRecord(P, PEOPLE, 'rec_05')).toBeNull();
        expect(ids(await store.queryRecords(P, PEOPLE, query(true)))).toEqual(['r2', 'r3', 'r4', 'r6']);
      });
    });

    describe('queries', () => {
      beforeEach(seed);

      it.each(OPERATOR_CASES)('%s', async (_label, predicate, expected) => {
        expect(ids(await store.queryRecords(P, PEOPLE, query(predicate)))).toEqual(expected);
      });

      it.each(REFERENCE_CASES.map((p) => [JSON.stringify(p), p] as const))('%s gives the reference answer', async (_label, predicate) => {
        const expected = DATA.filter((r) => matchesPredicate(r, predicate)).map((r) => r.id);
        expect((await store.queryRecords(P, PEOPLE, query(predicate))).map((r) => r.id)).toEqual(expected);
      });

      it.each(NULL_ON_LISTS.map((p) => [JSON.stringify(p), p] as const))('%s over a json list holding null gives the reference answer', async (_label, predicate) => {
        const extra = [rec(7, '2026-01-01T00:00:07.000Z', { name: 'gus', meta: [1, null] }), rec(8, '2026-01-01T00:00:08.000Z', { name: 'hal', meta: [null] })];
        for (const r of extra) await store.insertRecord(P, PEOPLE, r);
        const expected = [...DATA, ...extra].filter((r) => matchesPredicate(r, predicate)).map((r) => r.id);
        expect((await store.queryRecords(P, PEOPLE, query(predicate))).map((r) => r.id)).toEqual(expected);
      });

      it.each(SORT_CASES)('orders by %s %s, missing values first ascending', async (orderBy, direction, expected) => {
        expect(ids(await store.queryRecords(P, PEOPLE, query(true, orderBy, direction)))).toEqual(expected);
      });

      it.each(SORT_CASES)('walks %s %s page by page with keyset positions', async (orderBy, direction, expected) => {
        for (const limit of [1, 2, 4]) {
          expect(await walk(store, true, orderBy, direction, limit)).toEqual(expected);
        }
      });

      it('walks a filtered query page by page', async () => {
        const p: Predicate = { or: [['active', '==', true], ['age', '==', null]] };
        expect(await walk(store, p, 'age', 'desc', 1)).toEqual(['r3', 'r1', 'r6', 'r4']);
        expect(await walk(store, p, 'age', 'asc', 2)).toEqual(['r4', 'r6', 'r1', 'r3']);
      });

      it('stops after the record at which the user data returned reaches maxBytes (at least one record)', async () => {
        const all = await store.queryRecords(P, PEOPLE, query(true, 'name', 'asc'));
        const size = (r: RecordDoc): number => JSON.stringify(splitRecord(r).data).length;
        const firstTwo = size(all[0] as RecordDoc) + size(all[1] as RecordDoc);
        const cut = await store.queryRecords(P, PEOPLE, { ...query(true, 'name', 'asc'), maxBytes: firstTwo });
        expect(ids(cut)).toEqual(ids(all.slice(0, 2)));
        expect(ids(await store.queryRecords(P, PEOPLE, { ...query(true, 'name', 'asc'), maxBytes: 1 }))).toEqual(ids(all.slice(0, 1)));
      });

      it('honours the limit', async () => {
        expect(ids(await store.queryRecords(P, PEOPLE, query(true, 'name', 'asc', 2)))).toEqual(['r6', 'r1']);
      });

      it('refuses an unknown or $-prefixed field; an operator object is a plain value that matches nothing', async () => {
        await expect(store.queryRecords(P, PEOPLE, query(['$where', '==', 'x']))).rejects.toMatchObject({ code: 'invalid_request' });
        const operatorObject = { $ne: null } as unknown as string;
        expect(await store.queryRecords(P, PEOPLE, query(['name', '==', operatorObject]))).toEqual([]);
        expect(await store.queryRecords(P, PEOPLE, query(['name', 'in', [operatorObject]]))).toEqual([]);
        expect(await store.queryRecords(P, PEOPLE, query(['tags', 'array-contains', operatorObject]))).toEqual([]);
        await expect(store.queryRecords(P, PEOPLE, query(['meta', '==', operatorObject]))).rejects.toMatchObject({ code: 'invalid_request' });
      });
    });

    describe('values only BSON refuses, refused alike by every store', () => {
      const nested = (levels: number): RecordDoc[string] => {
        let v: RecordDoc[string] = 1;
        for (let i = 0; i < levels; i++) v = i % 2 ? [v] : { a: v };
        return v;
      };
      const CASES: Array<[string, RecordDoc[string]]> = [
        ['a key "_bsontype"', { _bsontype: 'ObjectId', id: 'x' }],
        ['a key "_bsontype" deep inside', [{ a: { _bsontype: 'Long' } }]],
        ['a NUL byte in a key', { 'a\u0000b': 1 }],
        ['a DBRef-shaped object', { $ref: 'users', $id: 'u1' }],
        ['nesting beyond 100 levels', nested(101)],
      ];

      it.each(CASES)('%s: 400 naming the field on insert and on replace, nothing stored', async (_label, meta) => {
        await seed();
        const insert = store.insertRecord(P, PEOPLE, rec(7, T0, { name: 'gus', meta }));
        await expect(insert).rejects.toMatchObject({ code: 'invalid_request', details: { field: 'meta' } });
        expect(await store.getRecord(P, PEOPLE, 'rec_07')).toBeNull();
        const r1 = DATA[0] as RecordDoc;
        await expect(store.replaceRecord(P, PEOPLE, { ...r1, version: 2, meta }, 1)).rejects.toMatchObject({ code: 'invalid_request' });
        expect(await store.getRecord(P, PEOPLE, 'rec_01')).toEqual(r1);
      });

      it('stores 64 levels of nesting exactly', async () => {
        await seed();
        await store.insertRecord(P, PEOPLE, rec(7, T0, { name: 'gus', meta: nested(64) }));
        expect((await store.getRecord(P, PEOPLE, 'rec_07'))?.meta).toEqual(nested(64));
      });

      it('refuses with 413 a record that grows past what one MongoDB document holds', async () => {
        await seed();
        const big = 'x'.repeat(6 * 1024 * 1024);
        const r1 = DATA[0] as RecordDoc;
        const grown = await store.replaceRecord(P, PEOPLE, { ...r1, version: 2, meta: [big, big] }, 1);
        expect(grown?.version).toBe(2);
        const tooBig = store.replaceRecord(P, PEOPLE, { ...(grown as RecordDoc), version: 3, name: big }, 2);
        await expect(tooBig).rejects.toMatchObject({ code: 'payload_too_large' });
        expect((await store.getRecord(P, PEOPLE, 'rec_01'))?.version).toBe(2);
      });
    });

    describe('idempotency keys', () => {
      // Expiry dates lie in the future, so a real server's TTL monitor cannot delete a key mid-test;
      // `now` is what the store compares with.
      const FUTURE = '2100-01-01T00:00:00.000Z';
      const claim = (key: string, fingerprint: string, now = FUTURE) => ({ key, fingerprint, now, expiresAt: '2100-01-02T00:00:00.000Z' });

      it('returns the first record for the same key and body, and stores one record', async () => {
        await store.createCollection(P, PEOPLE);
        const first = await store.insertRecord(P, PEOPLE, rec(1, T0, { name: 'a' }), claim('k1', 'f1'));
        expect(first).toEqual({ record: rec(1, T0, { name: 'a' }), replayed: false });
        const again = await store.insertRecord(P, PEOPLE, rec(2, T0, { name: 'a' }), claim('k1', 'f1'));
        expect(again).toEqual({ record: rec(1, T0, { name: 'a' }), replayed: true });
        expect(ids(await store.queryRecords(P, PEOPLE, query(true)))).toEqual(['r1']);
      });

      it('refuses the same key with another body', async () => {
        await store.createCollection(P, PEOPLE);
        await store.insertRecord(P, PEOPLE, rec(1, T0, { name: 'a' }), claim('k1', 'f1'));
        await expect(store.insertRecord(P, PEOPLE, rec(2, T0, { name: 'b' }), claim('k1', 'f2'))).rejects.toThrow(ConflictError);
        expect(ids(await store.queryRecords(P, PEOPLE, query(true)))).toEqual(['r1']);
      });

      it('forgets a key once it expired', async () => {
        await store.createCollection(P, PEOPLE);
        await store.insertRecord(P, PEOPLE, rec(1, T0, { name: 'a' }), claim('k1', 'f1'));
        const later = await store.insertRecord(P, PEOPLE, rec(2, T0, { name: 'a' }), claim('k1', 'f1', '2100-01-03T00:00:00.000Z'));
        expect(later.replayed).toBe(false);
        expect(ids(await store.queryRecords(P, PEOPLE, query(true)))).toEqual(['r1', 'r2']);
      });

      it('keeps no key when the insert failed on a unique field', async () => {
        await store.createCollection(P, PEOPLE);
        await store.insertRecord(P, PEOPLE, rec(1, T0, { name: 'a', email: 'a@x.io' }));
        await expect(store.insertRecord(P, PEOPLE, rec(2, T0, { name: 'b', email: 'a@x.io' }), claim('k1', 'f1'))).rejects.toThrow(ConflictError);
        const retry = await store.insertRecord(P, PEOPLE, rec(3, T0, { name: 'b', email: 'b@x.io' }), claim('k1', 'f1'));
        expect(retry.replayed).toBe(false);
      });

      it('never replays a record that was not stored: one key, concurrent requests, the first failing on a unique field', async () => {
        await store.createCollection(P, PEOPLE);
        await store.insertRecord(P, PEOPLE, rec(1, T0, { name: 'a', email: 'a@x.io' }));
        const body = { name: 'b', email: 'a@x.io' };
        const results = await Promise.allSettled([
          store.insertRecord(P, PEOPLE, rec(2, T0, body), claim('k1', 'f1')),
          store.insertRecord(P, PEOPLE, rec(3, T0, body), claim('k1', 'f1')),
          store.insertRecord(P, PEOPLE, rec(4, T0, body), claim('k1', 'f1')),
        ]);
        for (const r of results) {
          if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(ConflictError);
          else expect(await store.getRecord(P, PEOPLE, r.value.record.id)).toEqual(r.value.record);
        }
        expect(ids(await store.queryRecords(P, PEOPLE, query(true)))).toEqual(['r1']);
        const retry = await store.insertRecord(P, PEOPLE, rec(5, T0, { name: 'b', email: 'b@x.io' }), claim('k1', 'f1'));
        expect(retry).toEqual({ record: rec(5, T0, { name: 'b', email: 'b@x.io' }), replayed: false });
      });

      it('stores one record for one key whatever the interleaving of concurrent requests', async () => {
        await store.createCollection(P, PEOPLE);
        const results = await Promise.all([1, 2, 3, 4].map((n) => store.insertRecord(P, PEOPLE, rec(n, T0, { name: 'a' }), claim('k1', 'f1'))));
        expect(results.filter((r) => !r.replayed)).toHaveLength(1);
        expect(new Set(results.map((r) => r.record.id)).size).toBe(1);
        expect(ids(await store.queryRecords(P, PEOPLE, query(true)))).toEqual(ids([results[0]?.record as RecordDoc]));
      });

      it('scopes keys to the collection and project', async () => {
        await store.createCollection(P, PEOPLE);
        await store.createCollection(OTHER, PEOPLE);
        await store.insertRecord(P, PEOPLE, rec(1, T0, { name: 'a' }), claim('k1', 'f1'));
        const other = await store.insertRecord(OTHER, PEOPLE, rec(2, T0, { name: 'a' }), claim('k1', 'f1'));
        expect(other.replayed).toBe(false);
      });
    });
  });
  describeRecordStoreEdges(makeStore);
}
