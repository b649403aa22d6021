/** The mongo adapter gives `indexed` and `unique` fields real indexes, created with createIndex. */
import { asProjectId, type Collection } from '@plinth/shared';
import { createMingoDb } from '@plinth/shared/testing/mingo-db';
import { MongoRecordStore } from '../src/store/mongo/mongo-record-store';

const P = asProjectId('ix-test');
const T0 = '2026-01-01T00:00:00.000Z';
const TASKS: Collection = {
  name: 'tasks',
  fields: { owner: { type: 'text', indexed: true }, slug: { type: 'text', unique: true }, note: { type: 'text' } },
  rules: {},
  revision: 1,
  created_at: T0,
  updated_at: T0,
};

it('creates (field, _id) and (field, created_at, _id) indexes, a partial unique index, and drops indexes of fields no longer indexed', async () => {
  const db = createMingoDb();
  const store = new MongoRecordStore(db);
  await store.init();
  await store.createCollection(P, TASKS);
  const records = db.collection('rec_ix-test_tasks');
  // `_id_` is always there (the server lists it; the stand-in does too).
  expect(await records.indexInformation()).toEqual({
    _id_: [['_id', 1]],
    'sys:created_at': [['created_at', 1], ['_id', 1]],
    'sys:updated_at': [['updated_at', 1], ['_id', 1]],
    'ix:owner': [['data.owner', 1], ['_id', 1]],
    'ic:owner': [['data.owner', 1], ['created_at', 1], ['_id', 1]],
    'ix:slug': [['data.slug', 1], ['_id', 1]],
    'ic:slug': [['data.slug', 1], ['created_at', 1], ['_id', 1]],
    'ux:slug': [['data.slug', 1]],
  });
  const next: Collection = { ...TASKS, revision: 2, fields: { ...TASKS.fields, owner: { type: 'text' }, note: { type: 'text', indexed: true } } };
  expect(await store.updateCollection(P, { next, expectedRevision: 1, removedFields: [] })).toBe(true);
  expect(Object.keys(await records.indexInformation()).sort()).toEqual(['_id_', 'ic:note', 'ic:slug', 'ix:note', 'ix:slug', 'sys:created_at', 'sys:updated_at', 'ux:slug']);
});
