/**
 * Field options beside `type` (min/max, min_length/max_length, pattern, enum, default), against
 * every RecordStore adapter: a definition carrying them is read back exactly as saved — json and
 * list defaults, enums of numbers and timestamps included — and changing them leaves every
 * stored record as it was (values and versions): a constraint is checked only when a value is
 * written, never by rewriting what is stored.
 */
import { asProjectId, type Collection, type RecordDoc } from '@plinth/shared';
import type { RecordStore } from '../src/store/record-store';

const P = asProjectId('proj-options');
const T0 = '2026-01-01T00:00:00.000Z';
const ITEMS: Collection = {
  name: 'items',
  fields: {
    n: { type: 'integer', required: false, unique: false, indexed: true, min: -5, max: 5, enum: [-5, 0, 5], default: 0 },
    x: { type: 'number', required: false, unique: false, indexed: false, min: 0.5 },
    due: { type: 'timestamp', required: false, unique: false, indexed: false, min: '2025-12-31T22:00:00.000Z', enum: ['2026-06-01T13:00:00.000Z'] },
    title: { type: 'text', required: true, unique: true, indexed: false, min_length: 2, max_length: 80, pattern: '^\\S+$', default: 'untitled' },
    tags: { type: 'list', required: false, unique: false, indexed: false, max_length: 3, default: ['a', 1, true] },
    meta: { type: 'json', required: false, unique: false, indexed: false, default: { k: [1, null, { deep: 'x' }] } },
  },
  rules: {},
  revision: 1,
  created_at: T0,
  updated_at: T0,
};
/** Every constraint tightened past what the stored records hold, a default added and one removed. */
const TIGHTENED: Collection = {
  ...ITEMS,
  fields: {
    ...ITEMS.fields,
    n: { type: 'integer', required: false, unique: false, indexed: true, max: 1 },
    title: { type: 'text', required: true, unique: true, indexed: false, max_length: 1, pattern: '^z' },
    tags: { type: 'list', required: false, unique: false, indexed: false, max_length: 0 },
    meta: { type: 'json', required: false, unique: false, indexed: false },
    label: { type: 'text', required: false, unique: false, indexed: false, default: 'new' },
  },
  revision: 2,
};

function rec(id: string, data: { [k: string]: RecordDoc[string] }): RecordDoc {
  return { id, version: 1, created_at: T0, updated_at: T0, ...data };
}

export function describeFieldOptionsContract(name: string, makeStore: () => Promise<RecordStore>): void {
  describe(`RecordStore field options: ${name}`, () => {
    let store: RecordStore;
    beforeEach(async () => {
      store = await makeStore();
      await store.createCollection(P, ITEMS);
    });
    afterEach(() => store.close());

    it('a definition with every option is read back as saved', async () => {
      expect(await store.getCollection(P, 'items')).toEqual(ITEMS);
      expect(await store.listCollections(P)).toEqual([ITEMS]);
      expect(await store.updateCollection(P, { next: TIGHTENED, expectedRevision: 1, removedFields: [] })).toBe(true);
      expect(await store.getCollection(P, 'items')).toEqual(TIGHTENED);
    });

    it('changing the options rewrites no stored record', async () => {
      const stored = [
        rec('rec_1', { n: 5, x: 0.5, due: '2026-06-01T13:00:00.000Z', title: 'hello', tags: ['a', 1, true], meta: { k: [1] } }),
        rec('rec_2', { title: 'untitled' }),
      ];
      for (const r of stored) await store.insertRecord(P, ITEMS, r);
      expect(await store.updateCollection(P, { next: TIGHTENED, expectedRevision: 1, removedFields: [] })).toBe(true);
      for (const r of stored) expect(await store.getRecord(P, TIGHTENED, r.id)).toEqual(r);
      const all = await store.queryRecords(P, TIGHTENED, { predicate: true, orderBy: 'id', direction: 'asc', limit: 10 });
      expect(all).toEqual(stored);
    });
  });
}
