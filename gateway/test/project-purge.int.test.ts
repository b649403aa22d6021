/**
 * Deleting a project purges its data in every service (records, auth, mailer), in both
 * topologies: a project created again with the same id starts empty, the old tenant's access
 * and refresh tokens are refused, and the id cannot be reused while the purge is unfinished.
 */
import { Redis } from 'ioredis';
import request from 'supertest';
import { DEFAULT_AUTH_REDIS_PREFIX } from '@plinth/shared';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';

const RUN = `${process.pid.toString(36)}${Date.now().toString(36)}`;
let counter = 0;

interface Keys {
  id: string;
  pk: string;
  sk: string;
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('deleting a project purges its data', () => {
  let t: TestPlinth;
  beforeAll(async () => {
    t = await startTestPlinth({ env: { PLINTH_PURGE_TIMEOUT_MS: '500', PLINTH_PURGE_RETRY_MS: '100' } });
  });
  afterAll(async () => {
    await t?.close();
    // Nothing of the run is left in the shared Redis (cluster: queue, sessions, revocations).
    expect(await t?.leftoverRedisKeys()).toEqual([]);
  });

  const admin = () => `Bearer ${t.adminKey}`;
  async function createProject(id: string): Promise<Keys> {
    const res = await request(t.app).post('/v1/admin/projects').set('Authorization', admin()).send({ id });
    expect(res.status).toBe(201);
    return { id, pk: res.body.keys.public as string, sk: res.body.keys.secret as string };
  }
  const call = (p: Keys, method: 'get' | 'post' | 'patch', path: string, key: string, body?: object) => {
    const r = request(t.app)[method](`/v1/projects/${p.id}${path}`).set('Authorization', `Bearer ${key}`);
    return body === undefined ? r : r.send(body);
  };

  it('re-created with the same id, the project is empty and the old tokens are refused', async () => {
    const id = `purge-${RUN}-${++counter}`;
    const old = await createProject(id);
    const email = `ada-${RUN}@example.com`;

    // The old tenant: a collection with a record (and an idempotency key), Auth with a user, a mail.
    const rules = { read: 'auth != null', create: 'auth != null', update: 'false', delete: 'false' };
    expect((await call(old, 'post', '/collections', old.sk, { name: 'notes', fields: { title: { type: 'text' } }, rules })).status).toBe(201);
    const rec = await call(old, 'post', '/collections/notes/records', old.sk, { data: { title: 'secret plans' } }).set('Idempotency-Key', 'k-1');
    expect(rec.status).toBe(201);
    expect((await call(old, 'patch', '/settings/auth', old.sk, { enabled: true, otp_creates_users: true })).status).toBe(200);
    const signup = await call(old, 'post', '/auth/signup', old.pk, { email, password: 'correct horse battery' });
    expect(signup.status).toBe(201);
    const access = signup.body.access_token as string;
    const refresh = signup.body.refresh_token as string;
    expect((await call(old, 'get', '/collections/notes/records', old.pk).set('X-Db-User-Token', access)).status).toBe(200);
    await until('the verification mail', async () => {
      const box = await call(old, 'get', `/mailbox?to=${encodeURIComponent(email)}`, old.sk);
      return box.body.messages?.length > 0 ? true : undefined;
    });

    const del = await request(t.app).delete(`/v1/admin/projects/${id}`).set('Authorization', admin());
    expect(del.status).toBe(200);
    expect(del.body).toMatchObject({ deleted: true, id });
    expect((await call(old, 'get', '/collections', old.sk)).status).toBe(401);
    if (t.topology === 'cluster') {
      // Sessions lived in Redis: the families and refresh tokens are gone, the revocation marker stays.
      const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
      try {
        const left = async (kind: string) => (await redis.keys(`${DEFAULT_AUTH_REDIS_PREFIX}${kind}:${id}:*`)).length;
        expect({ sess: await left('sess'), rt: await left('rt'), user: await left('user') }).toEqual({ sess: 0, rt: 0, user: 0 });
        expect(await left('revoked')).toBe(1);
      } finally {
        redis.disconnect();
      }
    }

    const fresh = await createProject(id);
    // Records: no collection; a collection of the same name holds nothing and forgot the idempotency key.
    expect((await call(fresh, 'get', '/collections', fresh.sk)).body).toEqual({ collections: [] });
    expect((await call(fresh, 'post', '/collections', fresh.sk, { name: 'notes', fields: { title: { type: 'text' } }, rules })).status).toBe(201);
    expect((await call(fresh, 'get', '/collections/notes/records', fresh.sk)).body.records).toEqual([]);
    const again = await call(fresh, 'post', '/collections/notes/records', fresh.sk, { data: { title: 'secret plans' } }).set('Idempotency-Key', 'k-1');
    expect(again.status).toBe(201);
    expect(again.body.record.id).not.toBe(rec.body.record.id);
    // Auth: default settings (disabled), then no users; the e-mail is free again.
    const settings = await call(fresh, 'get', '/settings/auth', fresh.sk);
    expect(settings.body).toMatchObject({ enabled: false, otp_creates_users: false });
    expect((await call(fresh, 'patch', '/settings/auth', fresh.sk, { enabled: true })).status).toBe(200);
    expect((await call(fresh, 'get', '/auth/users', fresh.sk)).body).toMatchObject({ users: [], total: 0 });
    // Mailer: an empty mailbox.
    expect((await call(fresh, 'get', '/mailbox', fresh.sk)).body).toEqual({ messages: [] });

    // The old tenant's tokens: refused by auth and by records, access and refresh alike.
    expect((await call(fresh, 'get', '/auth/user', fresh.pk).set('X-Auth-User-Token', access)).status).toBe(401);
    expect((await call(fresh, 'get', '/collections/notes/records', fresh.pk).set('X-Db-User-Token', access)).status).toBe(401);
    expect((await call(fresh, 'post', '/auth/refresh', fresh.pk, { refresh_token: refresh })).status).toBe(401);
    // …while a user of the new project signs up with the same e-mail and is served.
    const newcomer = await call(fresh, 'post', '/auth/signup', fresh.pk, { email, password: 'another good password' });
    expect(newcomer.status).toBe(201);
    expect((await call(fresh, 'get', '/collections/notes/records', fresh.pk).set('X-Db-User-Token', newcomer.body.access_token)).status).toBe(200);
    // The deletion had reported the purge finished.
    expect(del.body.purge).toBe('done');
  });

  it('refuses to re-create the id (409) until the purge has finished', async () => {
    const id = `purge-${RUN}-${++counter}`;
    const old = await createProject(id);
    expect((await call(old, 'post', '/collections', old.sk, { name: 'kept', fields: {} })).status).toBe(201);

    // Hold the purge back: in-process, one more purge step that waits; in a cluster, a frozen mailer.
    let release: () => void = () => {};
    let deletion: Promise<request.Response>;
    if (t.standalone) {
      const gate = new Promise<void>((r) => (release = r));
      const purges = t.standalone.purges;
      const step = { name: 'held', purge: () => gate };
      purges.push(step);
      release = (() => {
        const open = release;
        return () => {
          open();
          purges.splice(purges.indexOf(step), 1);
        };
      })();
      deletion = request(t.app).delete(`/v1/admin/projects/${id}`).set('Authorization', admin()).then((r) => r);
      // The project itself is gone at once (its keys no longer work)…
      await until('the keys to stop working', async () => ((await call(old, 'get', '/collections', old.sk)).status === 401 ? true : undefined));
    } else {
      const mailer = t.cluster!.processes.find((p) => p.name.startsWith('mailer'))!;
      mailer.child.kill('SIGSTOP');
      release = () => mailer.child.kill('SIGCONT');
      deletion = request(t.app).delete(`/v1/admin/projects/${id}`).set('Authorization', admin()).then((r) => r);
      const answered = await deletion;
      expect(answered.body).toEqual({ deleted: true, id, purge: 'pending' });
    }

    try {
      const early = await request(t.app).post('/v1/admin/projects').set('Authorization', admin()).send({ id });
      expect(early.status).toBe(409);
      expect(early.body).toMatchObject({ error: 'conflict', message: expect.stringMatching(/still being purged/) });
      expect((await request(t.app).get(`/v1/admin/projects/${id}`).set('Authorization', admin())).status).toBe(404);
    } finally {
      release();
    }

    await deletion;
    const fresh = await until('the id to be free again', async () => {
      const res = await request(t.app).post('/v1/admin/projects').set('Authorization', admin()).send({ id });
      if (res.status === 409) return undefined;
      return res;
    });
    expect(fresh.status).toBe(201);
    const keys = { id, pk: fresh.body.keys.public as string, sk: fresh.body.keys.secret as string };
    expect((await call(keys, 'get', '/collections', keys.sk)).body).toEqual({ collections: [] });
  });
});
