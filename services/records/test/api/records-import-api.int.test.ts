/**
 * `POST …/collections/{c}/records:import` through the gateway (both topologies): records come
 * back with their ids, versions and timestamps, a second import creates nothing, and only the
 * secret key may import.
 */
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { client, type Client } from './client';

describe('records:import', () => {
  let t: TestPlinth;
  let api: Client;
  beforeAll(async () => {
    t = await startTestPlinth();
    api = client(t);
  });
  afterAll(async () => t.close());

  it('restores exported records exactly after the collection was deleted, and a re-run imports nothing', async () => {
    const definition = { name: 'imp_notes', fields: { body: { type: 'text', required: true }, n: { type: 'integer', unique: true } } };
    expect((await api.post('/collections', definition)).status).toBe(201);
    for (let n = 1; n <= 3; n++) await api.post('/collections/imp_notes/records', { data: { body: `note ${n}`, n } });
    const first = (await api.get('/collections/imp_notes/records?orderBy=id')).body.records as Array<{ id: string }>;
    await api.patch(`/collections/imp_notes/records/${first[0]!.id}`, { data: { body: 'edited' } });
    const exported = (await api.get('/collections/imp_notes/records?orderBy=id')).body.records;
    expect(exported[0]).toMatchObject({ version: 2, body: 'edited' });

    expect((await api.delete('/collections/imp_notes')).status).toBe(200);
    expect((await api.post('/collections', definition)).status).toBe(201);
    const imported = await api.post('/collections/imp_notes/records:import', { records: exported });
    expect(imported.status).toBe(200);
    expect(imported.body).toEqual({ imported: 3, existing: 0 });
    expect((await api.get('/collections/imp_notes/records?orderBy=id')).body.records).toEqual(exported);

    const again = await api.post('/collections/imp_notes/records:import', { records: exported });
    expect(again.body).toEqual({ imported: 0, existing: 3 });
    expect((await api.get('/collections/imp_notes/records?orderBy=id')).body.records).toEqual(exported);

    // A new record with a unique value an imported one holds → 409, as on create.
    const clash = await api.post('/collections/imp_notes/records:import', {
      records: [{ ...exported[1], id: 'rec_06h0gv9ykgq7h3hdnt397ms3e8' }],
    });
    expect(clash.status).toBe(409);
  });

  it('refuses a public key, a bad body and records that do not fit the collection', async () => {
    await api.post('/collections', { name: 'imp_strict', fields: { n: { type: 'integer', required: true } } });
    const rec = { id: 'rec_06h0gv9ykgq7h3hdnt397ms3e8', version: 1, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', n: 1 };
    expect((await api.post('/collections/imp_strict/records:import', { records: [rec] }, 'public')).status).toBe(403);
    const cases: Array<[object, object]> = [
      [{ records: 'x' }, { field: 'records' }],
      [{ records: [rec], extra: 1 }, { field: 'extra' }],
      [{ records: [{ ...rec, n: 'one' }] }, { field: 'n' }],
      [{ records: [{ ...rec, n: undefined }] }, { field: 'n' }],
      [{ records: [{ ...rec, version: 0 }] }, { index: 0, field: 'version' }],
      [{ records: [{ ...rec, created_at: 'yesterday' }] }, { index: 0, field: 'created_at' }],
      [{ records: [rec, { ...rec, id: 'nope' }] }, { index: 1, field: 'id' }],
    ];
    for (const [body, details] of cases) {
      const res = await api.post('/collections/imp_strict/records:import', body);
      expect(res.status).toBe(400);
      expect(res.body.details).toMatchObject(details);
    }
    // Nothing of a refused batch was written.
    expect((await api.get('/collections/imp_strict/records')).body.records).toEqual([]);
    expect((await api.post('/collections/nowhere/records:import', { records: [] })).status).toBe(404);
  });
});
