/**
 * Rules before preconditions, write responses that show no more than reads, and collections
 * poisoned by a value the SQL JSON functions cannot read — through the real gateway, both
 * topologies (each uses the SQLite file in the harness' data directory).
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import request from 'supertest';
import { newId } from '@plinth/shared';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { client, type Client } from './client';

let t: TestPlinth;
let api: Client;
let alice: string;
let bob: string;

/** Requests with the public key and a user token. */
function as(token: string) {
  const wrap = (r: request.Test): request.Test => r.set('Authorization', `Bearer ${t.project.publicKey}`).set('X-Db-User-Token', token);
  const at = (p: string): string => `${api.base}/collections${p}`;
  return {
    get: (p: string) => wrap(request(t.app).get(at(p))),
    post: (p: string, body: object) => wrap(request(t.app).post(at(p))).send(body),
    patch: (p: string, body: object) => wrap(request(t.app).patch(at(p))).send(body),
    delete: (p: string) => wrap(request(t.app).delete(at(p))),
  };
}

async function mint(uid: string): Promise<string> {
  return (await api.post('/auth/tokens', { user_id: uid }).expect(200)).body.access_token;
}

beforeAll(async () => {
  t = await startTestPlinth();
  api = client(t);
  alice = await mint('alice');
  bob = await mint('bob');
});
afterAll(() => t.close());

describe('rules before preconditions', () => {
  beforeAll(async () => {
    await api
      .post('/collections', {
        name: 'notes',
        fields: { owner: { type: 'text', required: true }, body: { type: 'text' } },
        rules: { read: 'record.owner == auth.uid', create: 'data.owner == auth.uid', update: 'record.owner == auth.uid', delete: 'record.owner == auth.uid' },
      })
      .expect(201);
  });

  it("PATCH and DELETE of a record the caller cannot see → 404 whatever the version (no current_version)", async () => {
    const note = (await as(bob).post('/notes/records', { data: { owner: 'bob', body: 'secret' } }).expect(201)).body.record;
    for (const version of [1, 7]) {
      const patch = await as(alice).patch(`/notes/records/${note.id}`, { data: { body: 'x' }, version });
      expect(patch.status).toBe(404);
      expect(patch.body).toEqual({ error: 'not_found', message: expect.any(String), details: { id: note.id } });
      const del = await as(alice).delete(`/notes/records/${note.id}?version=${version}`);
      expect(del.status).toBe(404);
      expect(JSON.stringify(del.body)).not.toContain('current_version');
    }
    expect((await as(bob).get(`/notes/records/${note.id}`)).body.record).toEqual(note);
  });

  it('the owner with a stale version still gets 409 with current_version', async () => {
    const note = (await as(bob).post('/notes/records', { data: { owner: 'bob', body: 'v1' } }).expect(201)).body.record;
    await as(bob).patch(`/notes/records/${note.id}`, { data: { body: 'v2' }, version: 1 }).expect(200);
    const stale = await as(bob).patch(`/notes/records/${note.id}`, { data: { body: 'v3' }, version: 1 });
    expect(stale.status).toBe(409);
    expect(stale.body.details).toEqual({ current_version: 2 });
    expect((await as(bob).delete(`/notes/records/${note.id}?version=1`)).body.details).toEqual({ current_version: 2 });
  });
});

describe('a write response does not show what the read rule hides', () => {
  beforeAll(async () => {
    // A drop box: anyone signed in may file and amend an entry, only the secret key reads them.
    await api
      .post('/collections', {
        name: 'inbox',
        fields: { from: { type: 'text' }, text: { type: 'text' }, status: { type: 'text' } },
        rules: { read: 'false', create: 'auth != null', update: 'auth != null && data.status == "open"' },
      })
      .expect(201);
    await api
      .post('/collections', {
        name: 'posts',
        fields: { owner: { type: 'text' }, published: { type: 'boolean' }, text: { type: 'text' } },
        rules: { read: 'record.published == true || record.owner == auth.uid', create: 'auth != null', update: 'auth != null' },
      })
      .expect(201);
  });

  it('create and update answer {id, version} only when the caller may not read the record', async () => {
    const created = await as(alice).post('/inbox/records', { data: { from: 'alice', text: 'hidden text', status: 'open' } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ record: { id: expect.stringMatching(/^rec_/), version: 1 } });
    const updated = await as(alice).patch(`/inbox/records/${created.body.record.id}`, { data: { text: 'still hidden', status: 'open' } });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({ record: { id: created.body.record.id, version: 2 } });
    expect((await api.get(`/collections/inbox/records/${created.body.record.id}`)).body.record).toEqual(
      expect.objectContaining({ text: 'still hidden', version: 2 }),
    );
  });

  it('a record the caller can read afterwards is answered whole; one they can no longer read, {id, version}', async () => {
    const post = (await as(alice).post('/posts/records', { data: { owner: 'alice', published: false, text: 'draft' } }).expect(201)).body.record;
    expect(post).toEqual(expect.objectContaining({ owner: 'alice', text: 'draft' }));
    // Bob may update (the update rule lets any user) a published post he can read…
    await as(alice).patch(`/posts/records/${post.id}`, { data: { published: true } }).expect(200);
    const readable = await as(bob).patch(`/posts/records/${post.id}`, { data: { text: 'edited by bob' } });
    expect(readable.body.record).toEqual(expect.objectContaining({ text: 'edited by bob', version: 3 }));
    // …and when his write unpublishes it, he no longer sees its content in the answer.
    const hidden = await as(bob).patch(`/posts/records/${post.id}`, { data: { published: false, text: 'now a draft' } });
    expect(hidden.status).toBe(200);
    expect(hidden.body).toEqual({ record: { id: post.id, version: 4 } });
  });
});

describe('a collection poisoned by a value nested deeper than the JSON functions read', () => {
  const deep = (n: number): unknown => {
    let v: unknown = 1;
    for (let i = 0; i < n; i++) v = [v];
    return v;
  };
  let poisonedId: string;
  let fineId: string;

  /** A row written before values had a depth limit: put straight into the SQLite file. */
  function insertPoisoned(label: string): string {
    const id = newId('rec_');
    const db = new Database(path.join(t.dataDir, 'records.db'));
    try {
      const now = new Date().toISOString();
      db.prepare(`INSERT INTO "rec_${t.project.id}_boxes" (id, version, created_at, updated_at, data) VALUES (?, 1, ?, ?, ?)`).run(
        id,
        now,
        now,
        JSON.stringify({ owner: 'alice', meta: deep(1001), label }),
      );
    } finally {
      db.close();
    }
    return id;
  }

  beforeAll(async () => {
    await api
      .post('/collections', {
        name: 'boxes',
        fields: { owner: { type: 'text' }, meta: { type: 'json' }, label: { type: 'text' } },
        rules: { read: 'record.owner == auth.uid' },
      })
      .expect(201);
    fineId = (await api.post('/collections/boxes/records', { data: { owner: 'alice', meta: { ok: true }, label: 'fine' } }).expect(201)).body.record.id;
    poisonedId = insertPoisoned('poisoned');
  });

  it('writing a json value nested over the limit is refused: 400 naming the field', async () => {
    for (const depth of [40, 1001]) {
      const res = await api.post('/collections/boxes/records', { data: { owner: 'alice', meta: deep(depth) } });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_request');
      expect(res.body.details.field).toMatch(/meta$/);
      const patched = await api.patch(`/collections/boxes/records/${fineId}`, { data: { meta: deep(depth) } });
      expect(patched.status).toBe(400);
      expect(patched.body.details.field).toMatch(/meta$/);
    }
  });

  it('rule-filtered lists, gets and subscribe snapshots still answer 200', async () => {
    const list = await as(alice).get('/boxes/records');
    expect(list.status).toBe(200);
    expect(list.body.records.map((r: { id: string }) => r.id)).toContain(fineId);
    const filtered = await as(alice).get(`/boxes/records?where=${encodeURIComponent(JSON.stringify([['label', '==', 'fine']]))}`);
    expect(filtered.status).toBe(200);
    expect(filtered.body.records.map((r: { id: string }) => r.id)).toEqual([fineId]);
    expect((await as(alice).get(`/boxes/records/${fineId}`)).status).toBe(200);
    const sub = await as(alice).post('/boxes/subscribe', { snapshot: true });
    expect(sub.status).toBe(200);
    expect(sub.body.subscription.snapshot.records.map((r: { id: string }) => r.id)).toContain(fineId);
    const secretList = await api.get('/collections/boxes/records');
    expect(secretList.status).toBe(200);
    expect(secretList.body.records.map((r: { id: string }) => r.id)).toEqual(expect.arrayContaining([fineId, poisonedId]));
  });

  it('the secret key repairs it: a record PATCH, or removing the field from the collection; an index waits for the repair (409)', async () => {
    const early = await api.patch('/collections/boxes', { fields: { owner: { type: 'text', indexed: true } } });
    expect(early.status).toBe(409);
    expect(early.body.message).toMatch(/nested too deep/);

    const repaired = await api.patch(`/collections/boxes/records/${poisonedId}`, { data: { meta: { repaired: true } } });
    expect(repaired.status).toBe(200);
    expect(repaired.body.record).toEqual(expect.objectContaining({ id: poisonedId, meta: { repaired: true }, version: 2 }));

    const second = insertPoisoned('second');
    const dropped = await api.patch('/collections/boxes', { fields: { meta: null } });
    expect(dropped.status).toBe(200);
    const list = await as(alice).get('/boxes/records');
    expect(list.status).toBe(200);
    expect(list.body.records.map((r: { id: string }) => r.id)).toEqual(expect.arrayContaining([fineId, poisonedId, second]));
    expect(list.body.records.find((r: { id: string }) => r.id === second)).toEqual(expect.not.objectContaining({ meta: expect.anything() }));
    expect((await api.patch('/collections/boxes', { fields: { owner: { type: 'text', indexed: true } } })).status).toBe(200);
  });
});
