/**
 * Atomic batch writes (docs/records.md "Batch writes"), run against each store adapter: the
 * operations layer with the real rules engine over a SQLite or MongoDB (stand-in) store.
 */
import { asProjectId, PlinthError, type ChangeEventInput, type RecordDoc } from '@plinth/shared';
import type { Caller } from '../../src/operations/caller';
import { BatchOperations } from '../../src/operations/batch-operations';
import { CollectionOperations } from '../../src/operations/collection-operations';
import { RecordOperations } from '../../src/operations/record-operations';
import { createRulesPolicy } from '../../src/rules';
import type { RecordStore } from '../../src/store/record-store';

export const PROJECT = asProjectId('batches');
export const SECRET: Caller = { project: PROJECT, keyKind: 'secret', auth: null };
export function user(uid: string): Caller {
  return { project: PROJECT, keyKind: 'public', auth: { uid, email: null, email_verified: false, claims: {}, exp: Math.floor(Date.now() / 1000) + 3600 } };
}

export async function batchService(store: RecordStore) {
  const policy = createRulesPolicy();
  const events: ChangeEventInput[] = [];
  const publish = async (e: ChangeEventInput) => void events.push(e);
  const collections = new CollectionOperations(store, policy, undefined, publish);
  const records = new RecordOperations(store, policy, collections, undefined, undefined, publish);
  const batch = new BatchOperations(store, policy, collections, undefined, undefined, publish);
  await collections.create(SECRET, {
    name: 'notes',
    fields: { owner: { type: 'text' }, body: { type: 'text' }, slug: { type: 'text', unique: true }, n: { type: 'integer' } },
    rules: { read: 'record.owner == auth.uid', create: 'data.owner == auth.uid', update: 'record.owner == auth.uid', delete: 'record.owner == auth.uid' },
  });
  await collections.create(SECRET, { name: 'tags', fields: { label: { type: 'text' } }, rules: { read: 'true', create: 'auth != null' } });
  events.length = 0;
  const create = async (collection: string, data: object): Promise<RecordDoc> => (await records.create(SECRET, collection, { data }, undefined)).record as RecordDoc;
  const all = async (collection: string): Promise<RecordDoc[]> => {
    const c = await collections.load(PROJECT, collection);
    return store.queryRecords(PROJECT, c, { predicate: true, orderBy: 'id', direction: 'asc', limit: 1000 });
  };
  return { batch, records, collections, events, create, all };
}

async function refusal(p: Promise<unknown>): Promise<PlinthError> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(PlinthError);
  return err as PlinthError;
}

export function describeBatchContract(name: string, open: () => Promise<{ store: RecordStore; close: () => Promise<void> }>): void {
  describe(`atomic batch writes (${name})`, () => {
    let store: RecordStore;
    let close: () => Promise<void>;
    let svc: Awaited<ReturnType<typeof batchService>>;
    beforeEach(async () => {
      ({ store, close } = await open());
      svc = await batchService(store);
    });
    afterEach(() => close());

    it('100 operations across collections commit together and answer in order, one event per record', async () => {
      const existing = await Promise.all(Array.from({ length: 40 }, (_, i) => svc.create('notes', { owner: 'alice', body: `old ${i}`, n: i })));
      svc.events.length = 0;
      const ops = [
        ...Array.from({ length: 40 }, (_, i) => ({ op: 'create', collection: 'notes', data: { owner: 'alice', body: `new ${i}` } })),
        ...Array.from({ length: 20 }, (_, i) => ({ op: 'create', collection: 'tags', data: { label: `t${i}` } })),
        ...existing.slice(0, 20).map((r) => ({ op: 'update', collection: 'notes', id: r.id, data: { body: 'edited' }, version: 1 })),
        ...existing.slice(20).map((r) => ({ op: 'delete', collection: 'notes', id: r.id })),
      ];
      const answer = await svc.batch.run(user('alice'), { operations: ops }, undefined);
      expect(answer.results).toHaveLength(100);
      expect(answer.results[0]).toEqual({ record: expect.objectContaining({ owner: 'alice', body: 'new 0', version: 1 }) });
      expect(answer.results[40]).toEqual({ record: expect.objectContaining({ label: 't0' }) });
      expect(answer.results[60]).toEqual({ record: expect.objectContaining({ id: existing[0]!.id, body: 'edited', version: 2 }) });
      expect(answer.results[99]).toEqual({ deleted: true, id: existing[39]!.id });
      const notes = await svc.all('notes');
      expect(notes).toHaveLength(60);
      expect(notes.filter((r) => r.body === 'edited')).toHaveLength(20);
      expect(await svc.all('tags')).toHaveLength(20);
      expect(svc.events.map((e) => e.kind)).toEqual([...Array(60).fill('create'), ...Array(20).fill('update'), ...Array(20).fill('delete')]);
    });

    it('the 57th operation refused by its rule: 403 naming index 56, and nothing is written', async () => {
      const ops = Array.from({ length: 100 }, (_, i) => ({ op: 'create', collection: 'notes', data: { owner: i === 56 ? 'bob' : 'alice', body: `b${i}` } }));
      const err = await refusal(svc.batch.run(user('alice'), { operations: ops }, undefined));
      expect(err).toMatchObject({ status: 403, code: 'forbidden', details: { index: 56 } });
      expect(err.message).toMatch(/^operations\[56\]: /);
      expect(await svc.all('notes')).toHaveLength(0);
      expect(svc.events).toHaveLength(0);
    });

    it('a stale version, a missing record, a unique conflict or bad data refuse the batch with that operation\'s own code', async () => {
      const a = await svc.create('notes', { owner: 'alice', body: 'a', slug: 'taken' });
      svc.events.length = 0;
      const base = [{ op: 'create', collection: 'notes', data: { owner: 'alice', body: 'first' } }];
      const cases: Array<[object, number, string]> = [
        [{ op: 'update', collection: 'notes', id: a.id, data: { body: 'x' }, version: 7 }, 409, 'conflict'],
        [{ op: 'delete', collection: 'notes', id: 'rec_missing' }, 404, 'not_found'],
        [{ op: 'create', collection: 'notes', data: { owner: 'alice', slug: 'taken' } }, 409, 'conflict'],
        [{ op: 'create', collection: 'notes', data: { owner: 'alice', n: 'not a number' } }, 400, 'invalid_request'],
        [{ op: 'create', collection: 'notes', data: { owner: 'alice', body: 'half a pair \ud800' } }, 400, 'invalid_request'], // not storable
        [{ op: 'create', collection: 'nowhere', data: {} }, 404, 'not_found'],
        [{ op: 'update', collection: 'notes', id: a.id, data: { body: 'y' } }, 400, 'invalid_request'], // a.id changed twice
      ];
      for (const [op, status, code] of cases) {
        const ops = status === 400 && code === 'invalid_request' && 'id' in op ? [{ op: 'delete', collection: 'notes', id: a.id }, op] : [...base, op];
        const err = await refusal(svc.batch.run(user('alice'), { operations: ops }, undefined));
        expect(err).toMatchObject({ status, code, details: expect.objectContaining({ index: 1 }) });
      }
      expect((await svc.all('notes')).map((r) => r.body)).toEqual(['a']);
      expect(svc.events).toHaveLength(0);
    });

    it('an operation its caller may not make refuses the batch as its single call would (404 for a record they cannot read)', async () => {
      const a = await svc.create('notes', { owner: 'alice', body: 'a' });
      const err = await refusal(svc.batch.run(user('bob'), {
        operations: [
          { op: 'create', collection: 'notes', data: { owner: 'bob', body: 'mine' } },
          { op: 'update', collection: 'notes', id: a.id, data: { owner: 'bob' } },
        ],
      }, undefined));
      // Bob cannot read alice's note: refused as if it did not exist, as the single update answers.
      expect(err).toMatchObject({ status: 404, details: { index: 1 } });
      expect(await svc.all('notes')).toHaveLength(1);
    });

    it('an Idempotency-Key covers the whole batch: the same key and body answer the same results, writing nothing again', async () => {
      const body = { operations: [{ op: 'create', collection: 'tags', data: { label: 'once' } }, { op: 'create', collection: 'tags', data: { label: 'twice?' } }] };
      const first = await svc.batch.run(user('alice'), body, 'key-1');
      const again = await svc.batch.run(user('alice'), body, 'key-1');
      expect(again).toEqual({ results: first.results, replayed: true });
      expect(await svc.all('tags')).toHaveLength(2);
      const other = await refusal(svc.batch.run(user('alice'), { operations: [{ op: 'create', collection: 'tags', data: {} }] }, 'key-1'));
      expect(other.status).toBe(409);
      expect(svc.events).toHaveLength(2);
    });

    it('a retried batch whose updates went through replays its answer instead of failing its version check', async () => {
      const a = await svc.create('notes', { owner: 'alice', body: 'a' });
      const body = { operations: [{ op: 'update', collection: 'notes', id: a.id, data: { body: 'b' }, version: 1 }] };
      const first = await svc.batch.run(user('alice'), body, 'key-2');
      expect(await svc.batch.run(user('alice'), body, 'key-2')).toEqual({ results: first.results, replayed: true });
    });

    it('concurrent batches on the same records are serialisable: no lost update, never half a batch', async () => {
      const x = await svc.create('notes', { owner: 'alice', n: 0 });
      const y = await svc.create('notes', { owner: 'alice', n: 0 });
      // Read-modify-write with versions: the winners' increments all land, the others get 409.
      const attempt = async () => {
        const [cx, cy] = await Promise.all([svc.records.get(SECRET, 'notes', x.id), svc.records.get(SECRET, 'notes', y.id)]);
        return svc.batch.run(user('alice'), {
          operations: [
            { op: 'update', collection: 'notes', id: x.id, data: { n: (cx.n as number) + 1 }, version: cx.version },
            { op: 'update', collection: 'notes', id: y.id, data: { n: (cy.n as number) + 1 }, version: cy.version },
          ],
        }, undefined).then(() => 'ok', (e: PlinthError) => e.code);
      };
      const outcomes = await Promise.all(Array.from({ length: 12 }, attempt));
      const wins = outcomes.filter((o) => o === 'ok').length;
      expect(wins).toBeGreaterThanOrEqual(1);
      expect(outcomes.every((o) => o === 'ok' || o === 'conflict')).toBe(true);
      const [fx, fy] = [await svc.records.get(SECRET, 'notes', x.id), await svc.records.get(SECRET, 'notes', y.id)];
      expect([fx.n, fy.n, fx.version, fy.version]).toEqual([wins, wins, 1 + wins, 1 + wins]);
      // Without versions: each batch writes its name into both; the survivors agree.
      await Promise.all(Array.from({ length: 12 }, (_, i) => svc.batch.run(user('alice'), {
        operations: [
          { op: 'update', collection: 'notes', id: x.id, data: { body: `batch ${i}` } },
          { op: 'update', collection: 'notes', id: y.id, data: { body: `batch ${i}` } },
        ],
      }, undefined).catch((e: PlinthError) => expect(e.code).toBe('conflict'))));
      const [gx, gy] = [await svc.records.get(SECRET, 'notes', x.id), await svc.records.get(SECRET, 'notes', y.id)];
      expect(gx.body).toBe(gy.body);
      expect(gx.version - fx.version).toBe(gy.version - fy.version);
    });

    it('every operation is checked against the state before the batch, lookups included', async () => {
      await svc.collections.update(SECRET, 'tags', { rules: { read: 'true', create: 'auth != null', delete: 'auth != null' } });
      await svc.collections.update(SECRET, 'notes', { rules: { read: 'record.owner == auth.uid', create: "data.owner == auth.uid && exists('tags', data.body)" } });
      const tag = await svc.create('tags', { label: 'x' });
      // The tag is deleted by the first operation, yet the second one's rule still finds it: the
      // batch is one decision on one state, whatever the order of its operations.
      const answer = await svc.batch.run(user('alice'), {
        operations: [
          { op: 'delete', collection: 'tags', id: tag.id },
          { op: 'create', collection: 'notes', data: { owner: 'alice', body: tag.id } },
        ],
      }, undefined);
      expect(answer.results[0]).toEqual({ deleted: true, id: tag.id });
      expect(await svc.all('tags')).toHaveLength(0);
      expect(await svc.all('notes')).toHaveLength(1);
    });

    it('relation fields: targets are checked as by the single calls, and deleting a relation target is left to DELETE', async () => {
      await svc.collections.create(SECRET, { name: 'pins', fields: { tag: { type: 'relation', collection: 'tags', on_delete: 'restrict' } }, rules: {} });
      const tag = await svc.create('tags', { label: 'x' });
      await svc.batch.run(SECRET, { operations: [{ op: 'create', collection: 'pins', data: { tag: tag.id } }] }, undefined);
      const missing = await refusal(svc.batch.run(SECRET, { operations: [{ op: 'create', collection: 'pins', data: { tag: 'rec_missing' } }] }, undefined));
      expect(missing).toMatchObject({ status: 400, details: expect.objectContaining({ index: 0 }) });
      const del = await refusal(svc.batch.run(SECRET, { operations: [{ op: 'delete', collection: 'tags', id: tag.id }] }, undefined));
      expect(del).toMatchObject({ status: 400, details: { index: 0, field: 'collection' } });
      expect(await svc.all('tags')).toHaveLength(1);
      expect(await svc.all('pins')).toHaveLength(1);
    });

    it('a batch may make at most 20 lookups in all', async () => {
      await svc.collections.update(SECRET, 'tags', { rules: { read: 'true', create: "!exists('tags', data.label)" } });
      const ops = (n: number) => Array.from({ length: n }, (_, i) => ({ op: 'create', collection: 'tags', data: { label: `l${i}` } }));
      await svc.batch.run(user('alice'), { operations: ops(20) }, undefined);
      const err = await refusal(svc.batch.run(user('alice'), { operations: ops(21) }, undefined));
      expect(err).toMatchObject({ status: 403, details: { reason: 'lookup_limit', limit: 20, index: 20 } });
    });

    it('the body is bounded: at most 100 operations, each checked for shape', async () => {
      const op = { op: 'create', collection: 'tags', data: {} };
      expect(await refusal(svc.batch.run(SECRET, { operations: Array(101).fill(op) }, undefined))).toMatchObject({ status: 400, details: { field: 'operations', limit: 100 } });
      expect(await refusal(svc.batch.run(SECRET, { operations: [] }, undefined))).toMatchObject({ status: 400 });
      expect(await refusal(svc.batch.run(SECRET, { operations: [op, { op: 'upsert', collection: 'tags' }] }, undefined))).toMatchObject({ status: 400, details: { index: 1, field: 'op' } });
      expect(await refusal(svc.batch.run(SECRET, { operations: [op, { op: 'delete', collection: 'tags', id: 'rec_x', data: {} }] }, undefined))).toMatchObject({ status: 400, details: { index: 1, field: 'data' } });
      expect(await refusal(svc.batch.run(SECRET, { ops: [] }, undefined))).toMatchObject({ status: 400, details: { field: 'ops' } });
    });
  });
}
