import { asProjectId, type Collection } from '@plinth/shared';
import { SqliteRecordStore } from '../src/store/sqlite/sqlite-record-store';
import { describeRecordStoreContract } from './record-store.contract';

describeRecordStoreContract('sqlite (in memory)', async () => SqliteRecordStore.open(':memory:'));

it('deletes expired idempotency keys as new ones arrive', async () => {
  const store = SqliteRecordStore.open(':memory:');
  const p = asProjectId('purge-test');
  const c: Collection = { name: 'c', fields: { a: { type: 'text' } }, rules: {}, revision: 1, created_at: '', updated_at: '' };
  await store.createCollection(p, c);
  const rec = (id: string) => ({ id, version: 1, created_at: 'x', updated_at: 'x', a: id });
  const claim = (key: string, now: string, expiresAt: string) => ({ key, fingerprint: 'f', now, expiresAt });
  await store.insertRecord(p, c, rec('r1'), claim('k1', '2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z'));
  await store.insertRecord(p, c, rec('r2'), claim('k2', '2026-01-01T00:30:00.000Z', '2026-01-02T00:30:00.000Z'));
  expect(store.countIdempotencyKeys()).toBe(2);
  await store.insertRecord(p, c, rec('r3'), claim('k3', '2026-01-02T00:10:00.000Z', '2026-01-03T00:10:00.000Z'));
  expect(store.countIdempotencyKeys()).toBe(2);
  await store.close();
});
