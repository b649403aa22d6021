import { PlinthError } from '../src/admin';
import { startSdkFixture, type SdkFixture } from './fixture';

/** `admin.records`, `admin.portability`, `collections.validate` and dry-run settings of `@plinth/client/admin` against a real standalone Plinth. */
describe('@plinth/client/admin records and portability', () => {
  let f: SdkFixture;
  beforeAll(async () => {
    f = await startSdkFixture();
    await f.admin.collections.create({ name: 'notes', fields: { body: { type: 'text' }, done: { type: 'boolean' } } });
    await f.admin.collections.create({ name: 'notes_copy', fields: { body: { type: 'text' }, done: { type: 'boolean' } } });
  });
  afterAll(async () => {
    await f.close();
  });

  it('collections.validate resolves for what saving would take, and answers what saving would refuse', async () => {
    await expect(f.admin.collections.validate('notes', { fields: { body: { type: 'text' } }, rules: { read: 'auth != null' } })).resolves.toBeUndefined();
    const err = await f.admin.collections.validate('notes', { fields: { body: { type: 'text' } }, rules: { read: 'auth.nope ==' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlinthError);
    expect(err).toMatchObject({ status: 400, code: 'invalid_request', details: expect.objectContaining({ field: 'rules.read' }) });
    // Nothing was saved.
    expect((await f.admin.collections.get('notes')).rules).toEqual({});
  });

  it('records: an idempotent create says when it replayed; list with conditions, get, a paged export stream, an import that skips ids it has', async () => {
    const first = await f.admin.records.create('notes', { body: 'one', done: false }, { idempotencyKey: 'sdk-note-1' });
    expect(first).toMatchObject({ replayed: false, record: { id: expect.any(String), body: 'one', version: 1 } });
    const again = await f.admin.records.create('notes', { body: 'one', done: false }, { idempotencyKey: 'sdk-note-1' });
    expect(again).toMatchObject({ replayed: true, record: { id: first.record.id } });
    for (const n of [2, 3, 4, 5]) await f.admin.records.create('notes', { body: `n${n}`, done: n % 2 === 0 }, { idempotencyKey: `sdk-note-${n}` });

    const open = await f.admin.records.list('notes', { where: [['done', '==', false]], orderBy: 'id' });
    expect(open.records.map((r) => r.body).sort()).toEqual(['n3', 'n5', 'one']);
    const asText = await f.admin.records.list('notes', { where: '[["done","==",true]]', limit: 1 });
    expect(asText.records).toHaveLength(1);
    expect(asText.cursor).toEqual(expect.any(String));
    expect(await f.admin.records.get('notes', first.record.id)).toMatchObject({ id: first.record.id, body: 'one' });

    const exported = [];
    for await (const r of f.admin.records.export('notes', { pageSize: 2 })) exported.push(r);
    expect(exported.map((r) => r.id)).toEqual([...exported.map((r) => r.id)].sort());
    expect(exported).toHaveLength(5);

    expect(await f.admin.records.import('notes_copy', exported)).toEqual({ imported: 5, existing: 0 });
    expect(await f.admin.records.import('notes_copy', exported)).toEqual({ imported: 0, existing: 5 });
    expect(await f.admin.records.get('notes_copy', first.record.id)).toMatchObject({ version: 1, created_at: first.record.created_at });
  });

  it('authSettings.update with dryRun checks and stores nothing', async () => {
    expect(await f.admin.authSettings.update({ access_token_ttl: 300 }, { dryRun: true })).toMatchObject({ access_token_ttl: 300 });
    expect((await f.admin.authSettings.get()).access_token_ttl).not.toBe(300);
    await expect(f.admin.authSettings.update({ access_token_ttl: 5 }, { dryRun: true })).rejects.toMatchObject({ status: 400 });
  });

  it('portability: settings with secrets, users as stored page by page, imported back as existing', async () => {
    expect(await f.admin.portability.settings()).toMatchObject({ enabled: true });
    const made = [];
    for (const n of [1, 2, 3]) made.push(await f.admin.users.create({ email: `portable${n}@example.com`, password: 'a portable password' }));
    const page = await f.admin.portability.users({ limit: 2 });
    expect(page).toMatchObject({ total: 3 });
    expect(page.users).toHaveLength(2);
    const all = [];
    for await (const u of f.admin.portability.exportUsers()) all.push(u);
    expect(all.map((u) => u.id).sort()).toEqual(made.map((u) => u.id).sort());
    expect(all[0]).toHaveProperty('password_hash');
    expect(await f.admin.portability.importUsers(all)).toEqual({ imported: 0, existing: 3 });
  });
});
