/**
 * The RecordStore contract at the edges where MongoDB and SQLite differ by nature, so every
 * adapter must be made to give the same answer: as many indexed fields as Plinth allows, a
 * record that breaks two unique fields, strings that are not valid Unicode. Run by
 * describeRecordStoreContract for every adapter.
 */
import { asProjectId, type Collection, type FieldDefinition, type RecordDoc } from '@plinth/shared';
import { MAX_INDEXED_FIELDS } from '../src/domain/collection-definition';
import type { RecordStore } from '../src/store/record-store';

const P = asProjectId('proj-edge');
const T0 = '2026-01-01T00:00:00.000Z';
const all = { predicate: true as const, orderBy: 'created_at', direction: 'asc' as const, limit: 100 };

function collection(name: string, fields: { [f: string]: FieldDefinition }, revision = 1): Collection {
  return { name, fields, rules: {}, revision, created_at: T0, updated_at: T0 };
}
function rec(id: string, data: { [k: string]: RecordDoc[string] }): RecordDoc {
  return { id, version: 1, created_at: T0, updated_at: T0, ...data };
}
/** `n` unique text fields named `<prefix>1` … */
function uniqueFields(prefix: string, n: number): { [f: string]: FieldDefinition } {
  return Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i + 1}`, { type: 'text', unique: true }]));
}

export function describeRecordStoreEdges(makeStore: () => Promise<RecordStore>): void {
  describe('edges where the stores differ by nature', () => {
    let store: RecordStore;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    it('answers ping', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });

    describe(`the most indexed fields a collection may have (${MAX_INDEXED_FIELDS}, all unique)`, () => {
      it('are created, enforced, and swapped all at once for as many others in one change', async () => {
        const first = collection('wide', uniqueFields('a', MAX_INDEXED_FIELDS));
        await store.createCollection(P, first);
        await store.insertRecord(P, first, rec('r1', { a20: 'x' }));
        await expect(store.insertRecord(P, first, rec('r2', { a20: 'x' }))).rejects.toMatchObject({ code: 'conflict', details: { field: 'a20' } });
        const swapped = collection('wide', uniqueFields('b', MAX_INDEXED_FIELDS), 2);
        const removed = Object.keys(first.fields);
        expect(await store.updateCollection(P, { next: swapped, expectedRevision: 1, removedFields: removed })).toBe(true);
        await store.insertRecord(P, swapped, rec('r2', { b20: 'y' }));
        await expect(store.insertRecord(P, swapped, rec('r3', { b20: 'y' }))).rejects.toMatchObject({ code: 'conflict', details: { field: 'b20' } });
        await store.insertRecord(P, swapped, rec('r4', { b1: 'x' }));
        expect((await store.queryRecords(P, swapped, all)).map((r) => r.id)).toEqual(['r1', 'r2', 'r4']);
      });
    });

    describe('a record that breaks two unique fields', () => {
      // `slug` became unique after `code`, but comes first in the definition: the store names
      // the first field of the definition that conflicts, whatever order its indexes were made in.
      const before = collection('pages', { slug: { type: 'text' }, code: { type: 'text', unique: true } });
      const after = collection('pages', { slug: { type: 'text', unique: true }, code: { type: 'text', unique: true } }, 2);
      const both = { slug: 's', code: 'c' };

      beforeEach(async () => {
        await store.createCollection(P, before);
        await store.insertRecord(P, before, rec('r1', both));
        expect(await store.updateCollection(P, { next: after, expectedRevision: 1, removedFields: [] })).toBe(true);
      });

      it('is refused naming the first unique field of the definition that conflicts, on insert', async () => {
        await expect(store.insertRecord(P, after, rec('r2', both))).rejects.toMatchObject({ code: 'conflict', details: { field: 'slug' } });
        await expect(store.insertRecord(P, after, rec('r3', { slug: 'other', code: 'c' }))).rejects.toMatchObject({ details: { field: 'code' } });
      });

      it('and on replace', async () => {
        await store.insertRecord(P, after, rec('r2', { slug: 't', code: 'd' }));
        const next = { ...rec('r2', both), version: 2 };
        await expect(store.replaceRecord(P, after, next, 1)).rejects.toMatchObject({ code: 'conflict', details: { field: 'slug' } });
      });
    });

    describe('project purge', () => {
      it('removes every collection, record and idempotency key of the project, and nothing of another', async () => {
        const other = asProjectId('proj-edge-other');
        const notes = collection('notes', { title: { type: 'text', unique: true } });
        const key = { key: 'k1', fingerprint: 'f', now: '2100-01-01T00:00:00.000Z', expiresAt: '2100-01-02T00:00:00.000Z' };
        for (const p of [P, other]) {
          await store.createCollection(p, notes);
          await store.insertRecord(p, notes, rec('r1', { title: 'a' }), key);
        }
        await store.purgeProject(P);
        await store.purgeProject(P);
        expect(await store.listCollections(P)).toEqual([]);
        expect(await store.getRecord(other, notes, 'r1')).toMatchObject({ title: 'a' });
        expect(await store.insertRecord(other, notes, rec('r2', { title: 'a' }), key)).toMatchObject({ replayed: true });
        // The name and the key are free again, the records gone.
        await store.createCollection(P, notes);
        expect(await store.insertRecord(P, notes, rec('r3', { title: 'a' }), key)).toMatchObject({ replayed: false });
        expect((await store.queryRecords(P, notes, all)).map((r) => r.id)).toEqual(['r3']);
      });
    });

    describe('strings that are not valid Unicode (a lone UTF-16 surrogate)', () => {
      // MongoDB would store U+FFFD in its place (BSON strings are UTF-8), SQLite the surrogate:
      // two records differing only there would collide on a unique field on one store only.
      const tags = collection('tags', { label: { type: 'text', unique: true }, meta: { type: 'json' } });

      it.each([
        ['a text value', { label: 'a\ud800' }, 'label'],
        ['a value inside json', { meta: { deep: ['\udc00'] } }, 'meta'],
        ['a key inside json', { meta: { 'k\ud83d': 1 } }, 'meta'],
      ])('are refused with 400 naming the field: %s', async (_what, data, field) => {
        await store.createCollection(P, tags);
        await expect(store.insertRecord(P, tags, rec('r1', data))).rejects.toMatchObject({ status: 400, details: { field } });
        expect(await store.queryRecords(P, tags, all)).toEqual([]);
      });

      it('while a surrogate pair (an emoji) is kept exactly', async () => {
        await store.createCollection(P, tags);
        await store.insertRecord(P, tags, rec('r1', { label: 'a😀', meta: { '😀': '😀' } }));
        expect(await store.getRecord(P, tags, 'r1')).toEqual(rec('r1', { label: 'a😀', meta: { '😀': '😀' } }));
      });
    });
  });
}
