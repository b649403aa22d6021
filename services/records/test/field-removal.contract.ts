/**
 * Removing a field from a collection, against every RecordStore adapter: a record that loses a
 * value gets a new version, so a write that read it before the removal (a PATCH merges the
 * stored fields it read) fails its compare-and-set instead of writing the removed value back —
 * and the stores, which index and compare a re-added field by its new type, keep agreeing.
 */
import { asProjectId, type Collection, type RecordDoc } from '@plinth/shared';
import type { RecordStore } from '../src/store/record-store';

const P = asProjectId('proj-removal');
const T0 = '2026-01-01T00:00:00.000Z';
const NOTES: Collection = {
  name: 'notes',
  fields: { title: { type: 'text' }, note: { type: 'text' } },
  rules: {},
  revision: 1,
  created_at: T0,
  updated_at: T0,
};
const WITHOUT_NOTE: Collection = { ...NOTES, fields: { title: { type: 'text' } }, revision: 2 };

export function describeFieldRemovalContract(name: string, makeStore: () => Promise<RecordStore>): void {
  describe(`RecordStore field removal: ${name}`, () => {
    let store: RecordStore;
    beforeEach(async () => {
      store = await makeStore();
      await store.createCollection(P, NOTES);
    });
    afterEach(() => store.close());

    it('a replace that read the record before a field was removed does not write the value back', async () => {
      await store.insertRecord(P, NOTES, { id: 'rec_1', version: 1, created_at: T0, updated_at: T0, title: 'a', note: 'keep out' });
      await store.insertRecord(P, NOTES, { id: 'rec_2', version: 1, created_at: T0, updated_at: T0, title: 'b' });
      const before = (await store.getRecord(P, NOTES, 'rec_1')) as RecordDoc;
      expect(await store.updateCollection(P, { next: WITHOUT_NOTE, expectedRevision: 1, removedFields: ['note'] })).toBe(true);
      // What a PATCH of the title computed from what it read: every stored field, note included.
      const patched: RecordDoc = { ...before, version: before.version + 1, title: 'a2' };
      expect(await store.replaceRecord(P, NOTES, patched, before.version)).toBeNull();
      const now = (await store.getRecord(P, WITHOUT_NOTE, 'rec_1')) as RecordDoc;
      expect(now).not.toHaveProperty('note');
      expect(now.version).toBe(before.version + 1);
      // A record that held no value of the field keeps its version.
      expect((await store.getRecord(P, WITHOUT_NOTE, 'rec_2'))?.version).toBe(1);
      // The PATCH's retry reads again and writes without the removed value.
      expect(await store.replaceRecord(P, WITHOUT_NOTE, { ...now, version: now.version + 1, title: 'a2' }, now.version)).not.toHaveProperty('note');
    });
  });
}
