import { randomUUID } from 'node:crypto';
import { MongoClient, type Db, type Document } from 'mongodb';
import { asProjectId, type Collection, type RecordDoc } from '@plinth/shared';
import { createMingoDb } from '@plinth/shared/testing/mingo-db';
import { MongoRecordStore } from '../src/store/mongo/mongo-record-store';
import type { RecordQuery } from '../src/store/record-store';
import { describeAggregateContract } from './aggregate.contract';
import { describeFieldOptionsContract } from './field-options.contract';
import { describeFileFieldsContract } from './file-fields.contract';
import { describeFieldRemovalContract } from './field-removal.contract';
import { describeRecordStoreContract } from './record-store.contract';

// Always: the query translation evaluated by mingo over the same documents (docs/architecture.md "Ports and adapters").
describeRecordStoreContract('mongo adapter on mingo', async () => {
  const store = new MongoRecordStore(createMingoDb());
  await store.init();
  return store;
});
describeFieldRemovalContract('mongo adapter on mingo', async () => {
  const store = new MongoRecordStore(createMingoDb());
  await store.init();
  return store;
});
describeAggregateContract('mongo adapter on mingo', async () => {
  const store = new MongoRecordStore(createMingoDb());
  await store.init();
  return store;
});
describeFieldOptionsContract('mongo adapter on mingo', async () => {
  const store = new MongoRecordStore(createMingoDb());
  await store.init();
  return store;
});
describeFileFieldsContract('mongo adapter on mingo', async () => {
  const store = new MongoRecordStore(createMingoDb());
  await store.init();
  return store;
});

// Opt-in: a real MongoDB server (a replica set: inserts with idempotency keys are transactions)
// when MONGO_URL is set — a fresh database per test, dropped after. docs/testing.md.
const MONGO_URL = process.env.MONGO_URL;

async function openReal(): Promise<{ store: MongoRecordStore; db: Db }> {
  const client = new MongoClient(MONGO_URL as string, { writeConcern: { w: 'majority' } });
  await client.connect();
  const db = client.db(`plinth_records_test_${randomUUID().slice(0, 8)}`);
  const store = new MongoRecordStore(db, async () => {
    await db.dropDatabase();
    await client.close();
  });
  await store.init();
  return { store, db };
}

if (!MONGO_URL) {
  process.stdout.write('mongo-record-store: MONGO_URL is not set, so the real-server contract and explain tests are not registered (docs/testing.md)\n');
} else {
  describeRecordStoreContract('mongo adapter on real MongoDB (MONGO_URL)', async () => (await openReal()).store);
  describeFieldRemovalContract('mongo adapter on real MongoDB (MONGO_URL)', async () => (await openReal()).store);
  describeAggregateContract('mongo adapter on real MongoDB (MONGO_URL)', async () => (await openReal()).store);
  describeFieldOptionsContract('mongo adapter on real MongoDB (MONGO_URL)', async () => (await openReal()).store);
  describeFileFieldsContract('mongo adapter on real MongoDB (MONGO_URL)', async () => (await openReal()).store);

  describe('query plans on real MongoDB (MONGO_URL)', () => {
    const P = asProjectId('explain');
    const T0 = Date.UTC(2026, 0, 1);
    const POSTS: Collection = {
      name: 'posts',
      fields: { owner: { type: 'text', indexed: true }, score: { type: 'integer', indexed: true } },
      rules: {},
      revision: 1,
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
    };
    const LIMIT = 20;
    let store: MongoRecordStore;
    let db: Db;
    beforeAll(async () => {
      ({ store, db } = await openReal());
      await store.createCollection(P, POSTS);
      const docs = Array.from({ length: 2000 }, (_, i) => {
        const at = new Date(T0 + i * 1000).toISOString();
        return { _id: `rec_${String(i).padStart(5, '0')}`, version: 1, created_at: at, updated_at: at, data: { owner: `usr_${i % 4}`, score: i % 100 } };
      });
      await db.collection('rec_explain_posts').insertMany(docs as never[]);
    });
    afterAll(() => store.close());

    /** Every stage name of a winning plan, depth first. */
    function stages(plan: Document): string[] {
      const own = typeof plan.stage === 'string' ? [plan.stage as string] : [];
      const children = [plan.inputStage, ...((plan.inputStages as Document[] | undefined) ?? [])].filter(Boolean) as Document[];
      return [...own, ...children.flatMap(stages)];
    }

    async function page(query: RecordQuery): Promise<RecordDoc[]> {
      return store.queryRecords(P, POSTS, query);
    }

    it('page 2 of a filtered keyset walk examines about `limit` keys (it seeks; no scan of page 1)', async () => {
      const base: RecordQuery = { predicate: ['owner', '==', 'usr_1'], orderBy: 'created_at', direction: 'asc', limit: LIMIT };
      const first = await page(base);
      const last = first[first.length - 1] as RecordDoc;
      const second: RecordQuery = { ...base, after: { value: last.created_at, id: last.id } };
      const far = await page({ ...base, limit: 400 });
      const deep = far[far.length - 1] as RecordDoc;
      for (const q of [second, { ...base, after: { value: deep.created_at, id: deep.id } }]) {
        const stats = (await store.explainQuery(P, POSTS, q)).executionStats as Document;
        expect(stats.nReturned).toBe(LIMIT);
        expect(stats.totalKeysExamined).toBeLessThanOrEqual(LIMIT + 2);
      }
    });

    it('`owner == x` in the default order has no SORT stage', async () => {
      const plan = await store.explainQuery(P, POSTS, { predicate: ['owner', '==', 'usr_2'], orderBy: 'created_at', direction: 'asc', limit: LIMIT });
      const winning = (plan.queryPlanner as Document).winningPlan as Document;
      const names = stages((winning.queryPlan as Document | undefined) ?? winning);
      expect(names).toContain('IXSCAN');
      expect(names).not.toContain('SORT');
    });
  });
}
