/**
 * The outbox contract (docs/architecture.md "The outbox"): what every RecordStore with an outbox
 * (`writesEvents`) must do, read back through its OutboxSource as the relay reads it. A write
 * that happens appends its event in its own transaction; one that does not (a unique violation,
 * a lost compare-and-set, a delete of nothing, an idempotent replay, a refused batch) appends
 * none; positions follow each other in commit order and each row names its predecessors.
 */
import { asProjectId, type ChangeEventInput, type Collection, type OutboxSource, type RecordDoc } from '@plinth/shared';
import type { RecordStore } from '../src/store/record-store';

const p = asProjectId('outbox-contract');
const c: Collection = { name: 'c', fields: { email: { type: 'text', unique: true } }, rules: {}, revision: 1, created_at: '', updated_at: '' };
const d: Collection = { ...c, name: 'd' };
const rec = (id: string, version: number, email: string): RecordDoc => ({ id, version, created_at: 't', updated_at: 't', email });
const ev = (kind: ChangeEventInput['kind'], record: RecordDoc, collection = 'c'): ChangeEventInput => ({ project: p, collection, kind, record, committed_at: 1 });

export function describeOutboxContract(name: string, open: () => Promise<{ store: RecordStore; source: OutboxSource }>): void {
  describe(`outbox contract: ${name}`, () => {
    it('appends the event of each write that happens, in its transaction and in commit order; none for one that does not', async () => {
      const { store, source } = await open();
      expect(store.writesEvents).toBe(true);
      await store.createCollection(p, c);
      await store.createCollection(p, d);
      const epoch = await source.epoch();
      expect(epoch).not.toBe('');
      const a = rec('rec_a', 1, 'a@x');
      await store.insertRecord(p, c, a, undefined, ev('create', a));
      await expect(store.insertRecord(p, c, rec('rec_b', 1, 'a@x'), undefined, ev('create', rec('rec_b', 1, 'a@x')))).rejects.toThrow();
      expect(await store.replaceRecord(p, c, rec('rec_a', 3, 'z@x'), 2, ev('update', rec('rec_a', 3, 'z@x')))).toBeNull();
      expect(await store.deleteRecord(p, c, 'rec_none', undefined, ev('delete', rec('rec_none', 1, 'n@x')))).toBe(false);
      const other = rec('rec_d', 1, 'd@x');
      await store.insertRecord(p, d, other, undefined, ev('create', other, 'd'));
      const a2 = rec('rec_a', 2, 'b@x');
      await store.replaceRecord(p, c, a2, 1, ev('update', a2));
      await store.deleteRecord(p, c, 'rec_a', 2, ev('delete', a2));
      const claim = { key: 'k', fingerprint: 'f', now: new Date(0).toISOString(), expiresAt: new Date(9e12).toISOString() };
      const k = rec('rec_k', 1, 'k@x');
      expect((await store.insertRecord(p, c, k, claim, ev('create', k))).replayed).toBe(false);
      expect((await store.insertRecord(p, c, k, claim, ev('create', k))).replayed).toBe(true);

      const rows = await source.rowsAfter(0, 100);
      const described = rows.map((r) => {
        const e = JSON.parse(r.payload) as ChangeEventInput;
        return `${r.collection}:${e.kind}:${e.record!.id}:${e.record!.version}`;
      });
      expect(described).toEqual(['c:create:rec_a:1', 'd:create:rec_d:1', 'c:update:rec_a:2', 'c:delete:rec_a:2', 'c:create:rec_k:1']);
      // Positions follow each other; each row names the one before it, and the collection's.
      rows.forEach((r, i) => expect(r.prev).toBe(i === 0 ? r.seq - 1 : rows[i - 1]!.seq));
      expect(rows.map((r) => r.cprev)).toEqual([0, 0, rows[0]!.seq, rows[2]!.seq, rows[3]!.seq]);
      expect(await source.head()).toBe(rows[4]!.seq);
      expect(await source.oldest()).toEqual({ seq: rows[0]!.seq, prev: rows[0]!.prev });
      expect((await source.rowsAfter(rows[2]!.seq, 1)).map((r) => r.seq)).toEqual([rows[3]!.seq]);
      expect(await source.epoch()).toBe(epoch);
      await store.close();
      await source.close();
    });

    it('a batch appends one event per write in its transaction; a refused batch appends none', async () => {
      const { store, source } = await open();
      await store.createCollection(p, c);
      const x = rec('rec_x', 1, 'x@x');
      const y = rec('rec_y', 1, 'y@x');
      await store.applyBatch(p, [
        { op: 'create', collection: c, record: x, event: ev('create', x) },
        { op: 'create', collection: c, record: y, event: ev('create', y) },
      ]);
      const dup = rec('rec_z', 1, 'x@x');
      const z = rec('rec_w', 1, 'w@x');
      await expect(
        store.applyBatch(p, [
          { op: 'create', collection: c, record: z, event: ev('create', z) },
          { op: 'create', collection: c, record: dup, event: ev('create', dup) },
        ]),
      ).rejects.toThrow();
      const rows = await source.rowsAfter(0, 100);
      expect(rows.map((r) => (JSON.parse(r.payload) as ChangeEventInput).record!.id)).toEqual(['rec_x', 'rec_y']);
      expect(await store.getRecord(p, c, 'rec_w')).toBeNull();
      await store.close();
      await source.close();
    });
  });
}
