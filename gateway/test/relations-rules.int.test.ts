/**
 * Relations and security rules through the real gateway, with a signed-in user: an expanded
 * record the caller cannot read is absent from get, list and subscribe snapshots (never in the
 * body), and an `on_delete: cascade` that would delete a record whose delete rule refuses is
 * refused whole — nothing is deleted.
 */
import request from 'supertest';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';

describe('relations under security rules, through the gateway', () => {
  let t: TestPlinth;
  let token: string;
  let uid: string;
  beforeAll(async () => {
    t = await startTestPlinth();
    const settings = await secret('patch', '/settings/auth', { enabled: true });
    expect(settings.status).toBe(200);
    const signup = await request(t.app)
      .post(`/v1/projects/${t.project.id}/auth/signup`)
      .set('Authorization', `Bearer ${t.project.publicKey}`)
      .send({ email: 'ada@relations.example', password: 'correct horse battery' });
    expect(signup.status).toBe(201);
    token = signup.body.access_token as string;
    uid = signup.body.user.id as string;
  });
  afterAll(async () => {
    await t?.close();
    expect(await t?.leftoverRedisKeys()).toEqual([]);
  });

  function secret(method: 'get' | 'post' | 'patch' | 'delete', path: string, body?: object) {
    const r = request(t.app)[method](`/v1/projects/${t.project.id}${path}`).set('Authorization', `Bearer ${t.project.secretKey}`);
    return body === undefined ? r : r.send(body);
  }
  function user(method: 'get' | 'post' | 'delete', path: string, body?: object) {
    const r = request(t.app)[method](`/v1/projects/${t.project.id}${path}`).set('Authorization', `Bearer ${t.project.publicKey}`).set('X-Db-User-Token', token);
    return body === undefined ? r : r.send(body);
  }
  async function add(collection: string, data: object): Promise<{ id: string; [k: string]: unknown }> {
    const res = await secret('post', `/collections/${collection}/records`, { data });
    expect(res.status).toBe(201);
    return res.body.record;
  }

  it('an expanded record the caller cannot read is absent from get, list and the subscribe snapshot', async () => {
    expect((await secret('post', '/collections', { name: 'people', fields: { owner: { type: 'text' }, name: { type: 'text' } }, rules: { read: 'record.owner == auth.uid' } })).status).toBe(201);
    expect(
      (
        await secret('post', '/collections', {
          name: 'articles',
          fields: { author: { type: 'relation', collection: 'people' }, editors: { type: 'relation', collection: 'people', max_items: 3 } },
          rules: { read: 'auth != null' },
        })
      ).status,
    ).toBe(201);
    const mine = await add('people', { owner: uid, name: 'visible person' });
    const theirs = await add('people', { owner: 'someone-else', name: 'hidden person' });
    const a1 = await add('articles', { author: theirs.id, editors: [theirs.id, mine.id] });

    const got = await user('get', `/collections/articles/records/${a1.id}?expand=author,editors`);
    expect(got.status).toBe(200);
    expect(got.body.record.expand).toEqual({ editors: [mine] });
    expect(JSON.stringify(got.body)).not.toContain('hidden person');

    const listed = await user('get', '/collections/articles/records?expand=author,editors');
    expect(listed.status).toBe(200);
    expect(listed.body.records.map((r: { expand: unknown }) => r.expand)).toEqual([{ editors: [mine] }]);
    expect(JSON.stringify(listed.body)).not.toContain('hidden person');

    const sub = await user('post', '/collections/articles/subscribe', { snapshot: true, expand: 'author,editors' });
    expect(sub.status).toBe(200);
    expect(sub.body.subscription.snapshot.records[0].expand).toEqual({ editors: [mine] });
    expect(JSON.stringify(sub.body)).not.toContain('hidden person');

    // The secret key reads every record.
    const all = await secret('get', `/collections/articles/records/${a1.id}?expand=author`);
    expect(all.body.record.expand).toEqual({ author: theirs });

    const bad = await user('get', '/collections/articles/records?expand=title');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: 'invalid_request', details: { parameter: 'expand', field: 'title' } });
  });

  it('on_delete cascade under a delete rule that refuses one cascaded record: the whole delete is refused', async () => {
    expect((await secret('post', '/collections', { name: 'owners', fields: { name: { type: 'text' } }, rules: { read: 'true', delete: 'auth != null' } })).status).toBe(201);
    expect(
      (
        await secret('post', '/collections', {
          name: 'pets',
          fields: { owner: { type: 'relation', collection: 'owners', on_delete: 'cascade' }, locked: { type: 'boolean' } },
          rules: { read: 'true', delete: 'record.locked != true' },
        })
      ).status,
    ).toBe(201);
    const owner = await add('owners', { name: 'o' });
    const free = await add('pets', { owner: owner.id });
    const locked = await add('pets', { owner: owner.id, locked: true });

    const refused = await user('delete', `/collections/owners/records/${owner.id}`);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('forbidden');
    expect((await secret('get', `/collections/owners/records/${owner.id}`)).status).toBe(200);
    const pets = await secret('get', '/collections/pets/records?orderBy=id');
    expect(pets.body.records.map((r: { id: string }) => r.id).sort()).toEqual([free.id, locked.id].sort());

    // Unlocked, the cascade deletes both pets with their owner.
    expect((await secret('patch', `/collections/pets/records/${locked.id}`, { data: { locked: false } })).status).toBe(200);
    expect((await user('delete', `/collections/owners/records/${owner.id}`)).status).toBe(200);
    expect((await secret('get', '/collections/pets/records')).body.records).toEqual([]);
  });

  it('on_delete restrict answers 409 in the error envelope, naming the referencing collection', async () => {
    expect((await secret('post', '/collections', { name: 'teams', fields: {}, rules: { read: 'true', delete: 'true' } })).status).toBe(201);
    expect((await secret('post', '/collections', { name: 'members', fields: { team: { type: 'relation', collection: 'teams' } } })).status).toBe(201);
    const team = await add('teams', {});
    await add('members', { team: team.id });
    const res = await user('delete', `/collections/teams/records/${team.id}`);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ error: 'conflict', details: { reason: 'restricted', collection: 'members', field: 'team' } });
    expect(res.body.message).toContain('"members"');
  });
});
