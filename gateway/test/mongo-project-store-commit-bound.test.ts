/**
 * The project store's transactions are bounded by maxCommitTimeMS: a deletion whose commit a
 * majority never acknowledges (the stand-in's stallCommits) fails within the bound plus a
 * second with 503, and the project and its keys went together.
 */
import { asProjectId, toPlinthError } from '@plinth/shared';
import { createMingoDb, stallCommits } from '@plinth/shared/testing/mingo-db';
import { generateKey } from '../src/keys';
import { MongoProjectStore } from '../src/store/mongo-project-store';

const COMMIT_MS = 300;

it('a project deletion whose commit is never acknowledged fails within maxCommitTimeMS + 1 s with 503, nothing half-deleted', async () => {
  const db = createMingoDb();
  const store = await new MongoProjectStore(db, { internalSecret: 'internal-secret-for-tests-0123456789abcdef', commitTimeoutMs: COMMIT_MS }).init();
  const id = asProjectId('bounded');
  const key = generateKey(id, 'secret');
  await store.createProject({ id, name: 'Bounded', created_at: '2026-01-01T00:00:00.000Z' }, [key.record]);
  stallCommits(db);
  const started = Date.now();
  const err = await store.deleteProject(id).catch((e: unknown) => e);
  expect(Date.now() - started).toBeLessThan(COMMIT_MS + 1_000);
  expect(toPlinthError(err)).toMatchObject({ status: 503, code: 'unavailable' });
  expect(await store.getProject(id)).toBeNull();
  expect(await store.findKeyByHash(key.record.hash)).toBeNull();
  expect(await store.listPurges()).toEqual([id]);
}, 10_000);
