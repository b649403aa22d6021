import { MongoClient, type Db } from 'mongodb';
import { asProjectId } from '@plinth/shared';
import { createMingoDb, holdNext, injectFault } from '@plinth/shared/testing/mingo-db';
import { generateKey } from '../src/keys';
import { MongoProjectStore } from '../src/store/mongo-project-store';
import { describeOperatorStoreContract } from './operator-store.contract';
import { describeProjectStoreContract } from './project-store.contract';

const SECRET = 'internal-secret-for-tests-0123456789abcdef';

// docs/architecture.md "Ports and adapters": always — every filter the adapter sends is evaluated by mingo.
let db: Db;
describeProjectStoreContract(
  'mongo (query translation on mingo)',
  async () => {
    db = createMingoDb();
    return new MongoProjectStore(db, { internalSecret: SECRET }).init();
  },
  {
    async failKeyDeletion() {
      injectFault(db, { op: 'deleteMany', collection: 'gateway_api_keys' });
      return async () => {};
    },
  },
);

describeOperatorStoreContract('mongo (query translation on mingo)', async () => new MongoProjectStore(createMingoDb(), { internalSecret: SECRET }).init());

describe('MongoProjectStore on the stand-in: forced interleavings', () => {
  const alpha = asProjectId('alpha');
  const project = { id: alpha, name: 'Alpha', created_at: '2026-01-01T00:00:00.000Z' };

  it('a key whose insert is held while the project is deleted does not outlive the project', async () => {
    const mdb = createMingoDb();
    const store = await new MongoProjectStore(mdb, { internalSecret: SECRET }).init();
    await store.createProject(project, []);
    const k = generateKey(alpha, 'public');
    const held = holdNext(mdb, 'insertOne', 'gateway_api_keys');
    const adding = store.addKey(k.record);
    await held.reached;
    const deleting = store.deleteProject(alpha);
    held.release();
    await Promise.all([adding, deleting]);
    expect(await store.getProject(alpha)).toBeNull();
    expect(await store.findKeyByHash(k.record.hash)).toBeNull();
    await store.finishPurge(alpha); // the services' purge of that id has completed
    await store.createProject({ ...project, created_at: '2026-02-01T00:00:00.000Z' }, []);
    expect(await store.findKeyByHash(k.record.hash)).toBeNull();
    expect(await store.listKeys(alpha)).toEqual([]);
  });

  it('a project created again under an id whose keys an interrupted deletion left behind does not accept them', async () => {
    const mdb = createMingoDb();
    const store = await new MongoProjectStore(mdb, { internalSecret: SECRET }).init();
    const orphan = generateKey(alpha, 'secret');
    const { id, ...rest } = orphan.record;
    await mdb.collection('gateway_api_keys').insertOne({ _id: id, ...rest } as never);
    expect(await store.findKeyByHash(orphan.record.hash)).toBeNull();
    await store.createProject(project, []);
    expect(await store.findKeyByHash(orphan.record.hash)).toBeNull();
    expect(await store.listKeys(alpha)).toEqual([]);
  });

  it('starts when an index of the same name has other options (left by an older release), replacing it', async () => {
    const mdb = createMingoDb();
    await mdb.collection('gateway_api_keys').createIndex({ hash: 1 }, { name: 'hash_unique' });
    await new MongoProjectStore(mdb, { internalSecret: SECRET }).init();
    // Built beside the old one under its other name (`~2`), then the old one dropped.
    const names = (await mdb.collection('gateway_api_keys').listIndexes().toArray()).map((i) => i.name as string);
    expect(names).not.toContain('hash_unique');
    const ix = (await mdb.collection('gateway_api_keys').listIndexes().toArray()).find((i) => i.name === 'hash_unique~2');
    expect(ix?.unique).toBe(true);
  });

  it('a transient error inside deleteProject is retried and the project and its keys are gone', async () => {
    const mdb = createMingoDb();
    const store = await new MongoProjectStore(mdb, { internalSecret: SECRET }).init();
    const k = generateKey(alpha, 'secret');
    await store.createProject(project, [k.record]);
    injectFault(mdb, { op: 'deleteOne', collection: 'gateway_projects', error: 'transient' });
    expect(await store.deleteProject(alpha)).toBe(true);
    expect(await store.getProject(alpha)).toBeNull();
    expect(await store.findKeyByHash(k.record.hash)).toBeNull();
  });
});

// docs/architecture.md "Ports and adapters": against a real server when MONGO_URL is set (no failure injection there).
const mongoUrl = process.env.MONGO_URL;
if (mongoUrl) {
  describeProjectStoreContract(`mongo (real server at MONGO_URL; failure injection runs on the stand-in only)`, async () => {
    const client = await new MongoClient(mongoUrl).connect();
    const realDb = client.db(`plinth_test_${process.pid}_${Date.now()}`);
    return new MongoProjectStore(realDb, {
      internalSecret: SECRET,
      onClose: async () => {
        await realDb.dropDatabase();
        await client.close();
      },
    }).init();
  });
  describeOperatorStoreContract('mongo (real server at MONGO_URL)', async () => {
    const client = await new MongoClient(mongoUrl).connect();
    const realDb = client.db(`plinth_test_ops_${process.pid}_${Date.now()}`);
    return new MongoProjectStore(realDb, {
      internalSecret: SECRET,
      onClose: async () => {
        await realDb.dropDatabase();
        await client.close();
      },
    }).init();
  });
}
