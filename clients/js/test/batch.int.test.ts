import { createClient, PlinthError, type PlinthClient } from '../src';
import { startSdkFixture, type SdkFixture } from './fixture';

/** `batch()` through the SDK against a real standalone Plinth: all written, or none with the failing index. */
describe('@plinth/client batch()', () => {
  let f: SdkFixture;
  let client: PlinthClient;
  let uid: string;

  beforeAll(async () => {
    f = await startSdkFixture();
    await f.admin.collections.create({
      name: 'todos',
      fields: { owner: { type: 'text', required: true }, title: { type: 'text' } },
      rules: { read: 'record.owner == auth.uid', create: 'data.owner == auth.uid', update: 'record.owner == auth.uid', delete: 'record.owner == auth.uid' },
    });
    client = createClient({ url: f.url, project: f.project, key: f.pk });
    uid = (await client.auth.signUp({ email: 'batch@example.com', password: 'batch sdk password' })).user.id;
  });
  afterAll(async () => {
    client.close();
    await f.close();
  });

  it('writes every operation with the user token and answers in order', async () => {
    const todos = client.collection('todos');
    const first = await todos.create({ owner: uid, title: 'one' });
    const results = await client.batch([
      { op: 'create', collection: 'todos', data: { owner: uid, title: 'two' } },
      { op: 'update', collection: 'todos', id: first.id, data: { title: 'one!' }, version: 1 },
    ]);
    expect(results).toEqual([
      { record: expect.objectContaining({ title: 'two', version: 1 }) },
      { record: expect.objectContaining({ id: first.id, title: 'one!', version: 2 }) },
    ]);
    await client.batch([{ op: 'delete', collection: 'todos', id: first.id }]);
    expect((await todos.query().get()).records.map((r) => r.title)).toEqual(['two']);
  });

  it('a refused operation rejects with its own error and details.index, writing nothing', async () => {
    const err = await client
      .batch([
        { op: 'create', collection: 'todos', data: { owner: uid, title: 'mine' } },
        { op: 'create', collection: 'todos', data: { owner: 'usr_someone_else', title: 'theirs' } },
      ])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlinthError);
    expect(err).toMatchObject({ status: 403, code: 'forbidden', details: { index: 1 } });
    expect((await client.collection('todos').query().get()).records.map((r) => r.title)).toEqual(['two']);
  });
});
