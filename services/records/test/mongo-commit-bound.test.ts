/**
 * Every transaction commit is bounded by maxCommitTimeMS: when a majority cannot acknowledge it
 * (the stand-in's stallCommits), the create fails within that bound plus a second with 503,
 * never after the driver's two minutes of commit retries, and what it wrote is whole.
 */
import { asProjectId, toPlinthError, type Collection, type RecordDoc } from '@plinth/shared';
import { createMingoDb, stallCommits } from '@plinth/shared/testing/mingo-db';
import { MongoRecordStore } from '../src/store/mongo/mongo-record-store';

const P = asProjectId('commit-bound');
const T0 = '2026-01-01T00:00:00.000Z';
const NOTES: Collection = { name: 'notes', fields: { title: { type: 'text' } }, rules: {}, revision: 1, created_at: T0, updated_at: T0 };
const record = (id: string): RecordDoc => ({ id, version: 1, created_at: T0, updated_at: T0, title: 'a' });
const claim = { key: 'k1', fingerprint: 'f', now: '2100-01-01T00:00:00.000Z', expiresAt: '2100-01-02T00:00:00.000Z' };
const all = { predicate: true as const, orderBy: 'created_at', direction: 'asc' as const, limit: 100 };
const COMMIT_MS = 300;

it('an idempotent create whose commit is never acknowledged fails within maxCommitTimeMS + 1 s with 503, record and key whole', async () => {
  const db = createMingoDb();
  const store = new MongoRecordStore(db, undefined, { commitTimeMs: COMMIT_MS });
  await store.init();
  await store.createCollection(P, NOTES);
  stallCommits(db);
  const started = Date.now();
  const err = await store.insertRecord(P, NOTES, record('rec_1'), claim).catch((e: unknown) => e);
  expect(Date.now() - started).toBeLessThan(COMMIT_MS + 1_000);
  expect(toPlinthError(err)).toMatchObject({ status: 503, code: 'unavailable' });
  // Applied on the primary but unconfirmed: the record and its key together, so the client's
  // retry with the same key replays the record instead of storing a second one.
  stallCommits(db, 0);
  expect(await store.insertRecord(P, NOTES, record('rec_2'), claim)).toEqual({ record: record('rec_1'), replayed: true });
  expect((await store.queryRecords(P, NOTES, all)).map((r) => r.id)).toEqual(['rec_1']);
  await store.close();
}, 10_000);
