import { createClient, ConflictError, PlinthError, type PlinthClient } from '../src';
import { createRecordsClient } from '../src/records';
import { startSdkFixture, type SdkFixture } from './fixture';
import { startProxy } from './proxy';

interface Note {
  owner: string;
  body?: string;
  rank?: number;
}

/** Records through the SDK against a real standalone Plinth: every call, errors included. */
describe('@plinth/client records', () => {
  let f: SdkFixture;
  let client: PlinthClient;
  let uid: string;

  beforeAll(async () => {
    f = await startSdkFixture();
    await f.admin.collections.create({
      name: 'notes',
      fields: { owner: { type: 'text', required: true, indexed: true }, body: { type: 'text' }, rank: { type: 'integer', indexed: true } },
      rules: {
        read: 'record.owner == auth.uid',
        create: 'data.owner == auth.uid',
        update: 'record.owner == auth.uid',
        delete: 'record.owner == auth.uid',
      },
    });
    client = createClient({ url: f.url, project: f.project, key: f.pk });
    uid = (await client.auth.signUp({ email: 'records@example.com', password: 'records password' })).user.id;
  });
  afterAll(async () => {
    client.close();
    await f.close();
  });

  it('create, get, update and delete a record, sending the user token for the rules', async () => {
    const notes = client.collection<Note>('notes');
    const created = await notes.create({ owner: uid, body: 'hi' });
    expect(created).toMatchObject({ id: expect.stringMatching(/^rec_/), version: 1, owner: uid, body: 'hi' });
    expect(await notes.get(created.id)).toEqual(created);
    const updated = await notes.update(created.id, { body: 'hello' });
    expect(updated).toMatchObject({ id: created.id, version: 2, body: 'hello' });
    const versioned = await notes.update(created.id, { body: null }, { version: 2 });
    expect(versioned.version).toBe(3);
    expect(versioned.body).toBeUndefined();
    await notes.delete(created.id, { version: 3 });
    const gone = notes.get(created.id);
    await expect(gone).rejects.toBeInstanceOf(PlinthError);
    await expect(gone).rejects.toMatchObject({ status: 404, code: 'not_found', requestId: expect.any(String) });
  });

  it('a stale version on update or delete is a ConflictError carrying the current version', async () => {
    const notes = client.collection<Note>('notes');
    const r = await notes.create({ owner: uid, body: 'v1' });
    await notes.update(r.id, { body: 'v2' });
    const stale = notes.update(r.id, { body: 'v3' }, { version: 1 });
    await expect(stale).rejects.toBeInstanceOf(ConflictError);
    await expect(stale).rejects.toMatchObject({ status: 409, code: 'conflict', currentVersion: 2, details: { current_version: 2 } });
    await expect(notes.delete(r.id, { version: 1 })).rejects.toMatchObject({ currentVersion: 2 });
    expect((await notes.get(r.id)).body).toBe('v2');
  });

  it('bad input is a PlinthError with the envelope: status, code, message, details, requestId', async () => {
    const err = await client
      .collection('notes')
      .create({ owner: uid, colour: 'red' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlinthError);
    expect(err).toMatchObject({ status: 400, code: 'invalid_request', message: expect.any(String), details: { field: 'colour' }, requestId: expect.any(String) });
    await expect(client.collection('nope').get('rec_x')).rejects.toMatchObject({ status: 404, code: 'not_found' });
    await expect(client.collection('notes').limit(5000).get()).rejects.toMatchObject({ status: 400, code: 'invalid_request' });
  });

  it('a query builder reads one page at a time, and an async iterator reads every page', async () => {
    const other = createClient({ url: f.url, project: f.project, key: f.pk });
    const otherUid = (await other.auth.signUp({ email: 'records-query@example.com', password: 'records password' })).user.id;
    const notes = other.collection<Note>('notes');
    for (let i = 0; i < 7; i++) await notes.create({ owner: otherUid, rank: i });
    const q = notes.where('owner', '==', otherUid).where('rank', '>=', 1).orderBy('rank', 'desc').limit(3);
    const first = await q.get();
    expect(first.records.map((r) => r.rank)).toEqual([6, 5, 4]);
    expect(first.cursor).toEqual(expect.any(String));
    const second = await q.get({ cursor: first.cursor });
    expect(second.records.map((r) => r.rank)).toEqual([3, 2, 1]);
    const all: number[] = [];
    for await (const r of q) all.push(r.rank!);
    expect(all).toEqual([6, 5, 4, 3, 2, 1]);
    const ranks: number[] = [];
    for await (const r of notes.orderBy('rank').limit(2).all()) ranks.push(r.rank!);
    expect(ranks).toEqual([0, 1, 2, 3, 4, 5, 6]); // rules narrow the read to this user's records
    expect((await notes.where('rank', 'in', [1, 2]).get()).records).toHaveLength(2);
    other.close();
  });

  it('count(), aggregate({ sum, avg }) and get({ count: true }) over what the rules let the user read', async () => {
    const other = createClient({ url: f.url, project: f.project, key: f.pk });
    const otherUid = (await other.auth.signUp({ email: 'records-count@example.com', password: 'records password' })).user.id;
    const notes = other.collection<Note>('notes');
    for (const rank of [1, 2, 6]) await notes.create({ owner: otherUid, rank });
    await notes.create({ owner: otherUid, body: 'no rank' });
    expect(await notes.query().count()).toBe(4); // rules narrow the count to this user's records
    expect(await notes.where('rank', '>', 1).count()).toBe(2);
    expect(await notes.query().aggregate({ count: true, sum: ['rank'], avg: ['rank'] })).toEqual({ count: 4, sum: { rank: 9 }, avg: { rank: 3 } });
    const page = await notes.orderBy('rank').limit(2).get({ count: true });
    expect(page.records).toHaveLength(2);
    expect(page.total).toBe(4);
    await expect(notes.query().aggregate({ sum: ['body' as 'rank'] })).rejects.toMatchObject({ status: 400, details: { parameter: 'sum', field: 'body' } });
    other.close();
  });

  it('without a session the rules refuse: 403 forbidden', async () => {
    const anon = createClient({ url: f.url, project: f.project, key: f.pk });
    await expect(anon.collection('notes').list()).rejects.toMatchObject({ status: 403, code: 'forbidden' });
    anon.close();
  });

  it('a create whose answer was lost is retried with the same Idempotency-Key and makes one record', async () => {
    let dropped = 0;
    const proxy = await startProxy(f.url, {
      drop: (ex) => ex.method === 'POST' && ex.path.endsWith('/records') && dropped++ === 0,
    });
    const via = createClient({ url: proxy.url, project: f.project, key: f.pk });
    try {
      const me = (await via.auth.signIn('records@example.com', 'records password')).user.id;
      const rec = await via.collection<Note>('notes').create({ owner: me, body: 'exactly once' });
      const posts = proxy.log.filter((ex) => ex.method === 'POST' && ex.path.endsWith('/records'));
      expect(posts).toHaveLength(2);
      expect(posts.map((p) => p.status)).toEqual([201, 201]);
      expect(JSON.parse(posts[1]!.responseBody).record.id).toBe(rec.id); // the replay of the first create
      const same = await via.collection<Note>('notes').where('body', '==', 'exactly once').get();
      expect(same.records.map((r) => r.id)).toEqual([rec.id]);
    } finally {
      via.close();
      await proxy.close();
    }
  });

  it('no server at all: a network_error PlinthError with status 0, after the retries', async () => {
    const proxy = await startProxy(f.url);
    const dead = proxy.url;
    await proxy.close();
    const c = createRecordsClient({ url: dead, project: f.project, key: f.pk });
    await expect(c.collection('notes').create({ owner: 'x' }, { retries: 1 })).rejects.toMatchObject({ status: 0, code: 'network_error' });
    await expect(c.collection('notes').get('rec_x')).rejects.toMatchObject({ status: 0, code: 'network_error' });
  });

  it('every call takes an AbortSignal: an aborted call rejects with the abort reason and sends nothing', async () => {
    const proxy = await startProxy(f.url);
    const c = createRecordsClient({ url: proxy.url, project: f.project, key: f.sk });
    try {
      const ac = new AbortController();
      ac.abort();
      const notes = c.collection<Note>('notes');
      await expect(notes.create({ owner: 'u' }, { signal: ac.signal })).rejects.toMatchObject({ name: 'AbortError' });
      await expect(notes.get('rec_x', { signal: ac.signal })).rejects.toMatchObject({ name: 'AbortError' });
      await expect(notes.update('rec_x', {}, { signal: ac.signal })).rejects.toMatchObject({ name: 'AbortError' });
      await expect(notes.delete('rec_x', { signal: ac.signal })).rejects.toMatchObject({ name: 'AbortError' });
      await expect(notes.limit(1).get({ signal: ac.signal })).rejects.toMatchObject({ name: 'AbortError' });
      expect(proxy.log).toHaveLength(0);
    } finally {
      await proxy.close();
    }
  });

  it('@plinth/client/records with a minted token (admin.mintToken): the rules see that user', async () => {
    const minted = await f.admin.mintToken('ext_user_1', { expiresIn: 600 });
    expect(minted).toMatchObject({ token_type: 'Bearer', expires_in: 600, access_token: expect.any(String) });
    const c = createRecordsClient({ url: f.url, project: f.project, key: f.pk, token: minted.access_token });
    const r = await c.collection<Note>('notes').create({ owner: 'ext_user_1' });
    expect((await c.collection<Note>('notes').list()).records.map((x) => x.id)).toEqual([r.id]);
    await expect(c.collection<Note>('notes').create({ owner: 'someone else' })).rejects.toMatchObject({ status: 403, code: 'forbidden' });
  });
});
