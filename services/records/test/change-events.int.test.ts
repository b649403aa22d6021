/** Records announces every committed change on the EventBus (the SQLite event log in standalone). */
import path from 'node:path';
import { SqliteEventBus, asProjectId } from '@plinth/shared';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { client, type Client } from './api/client';

let t: TestPlinth;
let api: Client;
let bus: SqliteEventBus;

beforeAll(async () => {
  t = await startTestPlinth();
  api = client(t);
  bus = new SqliteEventBus({ file: path.join(t.dataDir, 'records.db') });
});
afterAll(async () => {
  await bus.close();
  await t.close();
});

it('publishes create, update (with the previous record), delete and collection changes, in order, after commit', async () => {
  const project = asProjectId(t.project.id);
  const start = await bus.head(project);
  await api.post('/collections', { name: 'evnotes', fields: { title: { type: 'text' } } }).expect(201);
  const created = (await api.post('/collections/evnotes/records', { data: { title: 'a' } }).expect(201)).body.record;
  await api.patch(`/collections/evnotes/records/${created.id}`, { data: { title: 'b' } }).expect(200);
  // A refused write publishes nothing.
  await api.patch(`/collections/evnotes/records/${created.id}`, { data: { title: 'c' }, version: 1 }).expect(409);
  await api.delete(`/collections/evnotes/records/${created.id}`).expect(200);
  await api.patch('/collections/evnotes', { rules: { read: 'true' } }).expect(200);

  const { events, trimmed } = await bus.read(project, 'evnotes', start);
  expect(trimmed).toBe(false);
  expect(events.map((e) => e.kind)).toEqual(['create', 'update', 'delete', 'collection']);
  expect(events[0]).toMatchObject({ collection: 'evnotes', record: { id: created.id, version: 1, title: 'a' } });
  expect(events[1]).toMatchObject({ record: { version: 2, title: 'b' }, previous: { version: 1, title: 'a' } });
  expect(events[2]).toMatchObject({ record: { id: created.id, version: 2 } });
  expect(events[3]).toMatchObject({ kind: 'collection', revision: 2 });
  for (let i = 1; i < events.length; i++) expect(events[i]!.seq).toBeGreaterThan(events[i - 1]!.seq);
});

it('publishes an imported record as a create (and nothing for one already stored)', async () => {
  const project = asProjectId(t.project.id);
  await api.post('/collections', { name: 'evimport', fields: { title: { type: 'text' } } }).expect(201);
  const start = await bus.head(project);
  const doc = { id: 'rec_01jz0000000000000000000000', version: 3, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-02T00:00:00.000Z', title: 'old' };
  await api.post('/collections/evimport/records:import', { records: [doc] }).expect(200);
  await api.post('/collections/evimport/records:import', { records: [doc] }).expect(200);
  const { events } = await bus.read(project, 'evimport', start);
  expect(events).toHaveLength(1);
  expect(events[0]).toMatchObject({ kind: 'create', collection: 'evimport', record: doc });
});
