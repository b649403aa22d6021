/** Atomic batch writes on the MongoDB adapter (one multi-document transaction), on the in-repo stand-in. */
import { createMingoDb, injectFault } from '@plinth/shared/testing/mingo-db';
import { MongoRecordStore } from '../../src/store/mongo/mongo-record-store';
import { batchService, describeBatchContract, user } from './batch.contract';

describeBatchContract('MongoDB adapter on mingo', async () => {
  const store = new MongoRecordStore(createMingoDb());
  await store.init();
  return { store, close: () => store.close() };
});

describe('a batch whose process dies mid-transaction (MongoDB adapter on mingo)', () => {
  // The stand-in has no process to kill: a failure at the 57th write, or at the commit, is what the
  // server sees of a client that died there — the transaction is never committed.
  it.each([
    ['the 57th insert', { op: 'insertOne' as const, collection: 'rec_batches_tags', nth: 57 }],
    ['the commit', { op: 'commitTransaction' as const }],
  ])('a failure at %s leaves nothing written; the next batch goes through whole', async (_, fault) => {
    const db = createMingoDb();
    const store = new MongoRecordStore(db);
    await store.init();
    const svc = await batchService(store);
    const operations = Array.from({ length: 100 }, (_x, i) => ({ op: 'create', collection: 'tags', data: { label: `t${i}` } }));
    injectFault(db, { ...fault, error: new Error('connection reset: the records process is gone') });
    await expect(svc.batch.run(user('alice'), { operations }, undefined)).rejects.toThrow(/connection reset/);
    expect(await svc.all('tags')).toHaveLength(0);
    expect(svc.events).toHaveLength(0);
    await svc.batch.run(user('alice'), { operations }, undefined);
    expect(await svc.all('tags')).toHaveLength(100);
    await store.close();
  });
});
