import express from 'express';
import helmet from 'helmet';
import request from 'supertest';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';

/** Project keys and the operator API, through the real standalone gateway. */
describe('gateway: project keys and operator API', () => {
  let t: TestPlinth;
  let other: { id: string; publicKey: string; secretKey: string };
  beforeAll(async () => {
    t = await startTestPlinth();
    other = await t.createProject();
  });
  afterAll(async () => {
    await t.close();
  });

  const collections = (project: string) => `/v1/projects/${project}/collections`;

  it.each([
    ['no Authorization header', undefined, 'Missing API key'],
    ['a malformed header', 'Basic abc', 'Missing API key'],
    ['an unknown key', 'Bearer pk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'Invalid API key'],
    ['garbage', 'Bearer not-a-key', 'Invalid API key'],
  ])('refuses %s with 401 unauthorized', async (_label, header, message) => {
    const req = request(t.app).get(collections(t.project.id));
    const res = header ? await req.set('Authorization', header) : await req;
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ error: 'unauthorized' });
    expect(res.body.message).toContain(message);
  });

  it("refuses another project's key with 401, both kinds", async () => {
    for (const key of [other.publicKey, other.secretKey]) {
      const res = await request(t.app).get(collections(t.project.id)).set('Authorization', `Bearer ${key}`);
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('unauthorized');
    }
  });

  it('lets a valid key through to the service', async () => {
    const res = await request(t.app).get(collections(t.project.id)).set('Authorization', `Bearer ${t.project.publicKey}`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/json/);
    expect(res.body).toEqual({ collections: [] });
  });

  it('refuses project keys on the operator API with 403, and no key with 401', async () => {
    for (const key of [t.project.publicKey, t.project.secretKey]) {
      const res = await request(t.app).get('/v1/admin/projects').set('Authorization', `Bearer ${key}`);
      expect(res.status).toBe(403);
      expect(res.body.error).toBe('forbidden');
    }
    const none = await request(t.app).get('/v1/admin/projects');
    expect(none.status).toBe(401);
    const wrong = await request(t.app).get('/v1/admin/projects').set('Authorization', 'Bearer adm_wrong-operator-key-000000');
    expect(wrong.status).toBe(401);
  });

  it('creates a project whose keys authenticate; a revoked key stops working at once', async () => {
    const admin = { Authorization: `Bearer ${t.adminKey}` };
    const created = await request(t.app).post('/v1/admin/projects').set(admin).send({ id: 'acme-shop', name: 'Acme' });
    expect(created.status).toBe(201);
    expect(created.body.project).toMatchObject({ id: 'acme-shop', name: 'Acme' });
    const { public: pk, secret: sk } = created.body.keys as { public: string; secret: string };
    expect(pk).toMatch(/^pk_/);
    expect(sk).toMatch(/^sk_/);

    const ok = await request(t.app).get(collections('acme-shop')).set('Authorization', `Bearer ${pk}`);
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ collections: [] });

    const listed = await request(t.app).get('/v1/admin/projects').set(admin);
    expect(listed.body.projects.map((p: { id: string }) => p.id)).toContain('acme-shop');

    const shown = await request(t.app).get('/v1/admin/projects/acme-shop').set(admin);
    expect(shown.status).toBe(200);
    expect(shown.body.keys).toHaveLength(2);
    expect(JSON.stringify(shown.body)).not.toContain(pk);
    const pubKeyId = shown.body.keys.find((k: { kind: string }) => k.kind === 'public').id as string;

    const revoked = await request(t.app).delete(`/v1/admin/projects/acme-shop/keys/${pubKeyId}`).set(admin);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ deleted: true, id: pubKeyId });
    const after = await request(t.app).get(collections('acme-shop')).set('Authorization', `Bearer ${pk}`);
    expect(after.status).toBe(401);

    const fresh = await request(t.app).post('/v1/admin/projects/acme-shop/keys').set(admin).send({ kind: 'public' });
    expect(fresh.status).toBe(201);
    expect(fresh.body.key).toMatchObject({ kind: 'public' });
    const works = await request(t.app).get(collections('acme-shop')).set('Authorization', `Bearer ${fresh.body.key.value}`);
    expect(works.status).toBe(200);

    const dup = await request(t.app).post('/v1/admin/projects').set(admin).send({ id: 'acme-shop' });
    expect(dup.status).toBe(409);
    expect(dup.body.error).toBe('conflict');

    const gone = await request(t.app).delete('/v1/admin/projects/acme-shop').set(admin);
    expect(gone.status).toBe(200);
    const dead = await request(t.app).get(collections('acme-shop')).set('Authorization', `Bearer ${sk}`);
    expect(dead.status).toBe(401);
    expect((await request(t.app).get('/v1/admin/projects/acme-shop').set(admin)).status).toBe(404);
  });

  it('generates a valid id when none is given, and rejects a bad one naming the field', async () => {
    const admin = { Authorization: `Bearer ${t.adminKey}` };
    const gen = await request(t.app).post('/v1/admin/projects').set(admin).send({});
    expect(gen.status).toBe(201);
    expect(gen.body.project.id).toMatch(/^[a-z][a-z0-9-]{2,39}$/);
    const bad = await request(t.app).post('/v1/admin/projects').set(admin).send({ id: 'Bad_ID' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: 'invalid_request', details: { fields: { id: expect.any(String) } } });
    const badKind = await request(t.app).post(`/v1/admin/projects/${gen.body.project.id}/keys`).set(admin).send({ kind: 'root' });
    expect(badKind.status).toBe(400);
    expect(badKind.body.details.fields.kind).toBeDefined();
  });

  it("a named operator's session acts on a project as its secret key (a viewer only reads), through this topology's transport, and is audited", async () => {
    const admin = { Authorization: `Bearer ${t.adminKey}` };
    for (const role of ['admin', 'viewer']) {
      await request(t.app).post('/v1/admin/operators').set(admin).send({ email: `${role}@gw.example`, password: 'gateway suite password', role });
    }
    const token = async (role: string) =>
      (await request(t.app).post('/v1/admin/sessions').send({ email: `${role}@gw.example`, password: 'gateway suite password' })).body.token as string;
    const [a, v] = [await token('admin'), await token('viewer')];
    const made = await request(t.app).post(collections(t.project.id)).set('Authorization', `Bearer ${a}`).send({ name: 'by_operator', fields: { n: { type: 'integer' } } });
    expect(made.status).toBe(201);
    const read = await request(t.app).get(`${collections(t.project.id)}/by_operator`).set('Authorization', `Bearer ${v}`);
    expect(read.status).toBe(200);
    const refused = await request(t.app).delete(`${collections(t.project.id)}/by_operator`).set('Authorization', `Bearer ${v}`);
    expect(refused.status).toBe(403);
    const audit = await request(t.app).get('/v1/admin/audit').query({ project: t.project.id }).set(admin);
    const seen = (audit.body.entries as Array<{ actor: string; method: string; status: number }>).map((e) => `${e.actor} ${e.method} ${e.status}`);
    expect(seen).toEqual(expect.arrayContaining(['admin@gw.example POST 201', 'viewer@gw.example DELETE 403']));
  });

  it('echoes a caller request id, and makes one when absent', async () => {
    const given = await request(t.app).get('/healthz').set('X-Request-Id', 'trace-abc-123');
    expect(given.headers['x-request-id']).toBe('trace-abc-123');
    const made = await request(t.app).get(collections(t.project.id)).set('Authorization', `Bearer ${t.project.publicKey}`);
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const unsafe = await request(t.app).get('/healthz').set('X-Request-Id', 'bad id with spaces');
    expect(unsafe.headers['x-request-id']).not.toBe('bad id with spaces');
  });

  it('refuses a 2 MiB body with 413 payload_too_large', async () => {
    const big = JSON.stringify({ data: { text: 'x'.repeat(2 * 1024 * 1024) } });
    const res = await request(t.app)
      .post(`${collections(t.project.id)}/notes/records`)
      .set('Authorization', `Bearer ${t.project.secretKey}`)
      .set('Content-Type', 'application/json')
      .send(big);
    expect(res.status).toBe(413);
    expect(res.body.error).toBe('payload_too_large');
  });

  it('answers unknown routes with a JSON 404, never HTML', async () => {
    for (const path of ['/nope', '/v1/projects', `/v1/projects/${t.project.id}/nothing-here`]) {
      const res = await request(t.app).get(path).set('Authorization', `Bearer ${t.project.publicKey}`);
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/application\/json/);
      expect(res.body.error).toBe('not_found');
    }
    const admin = await request(t.app).get('/v1/admin/nothing').set('Authorization', `Bearer ${t.adminKey}`);
    expect(admin.status).toBe(404);
    expect(admin.body.error).toBe('not_found');
  });

  it('serves health, readiness and metrics', async () => {
    expect((await request(t.app).get('/healthz')).body).toEqual({ status: 'ok', service: 'gateway' });
    expect((await request(t.app).get('/readyz')).status).toBe(200);
    // Metrics are for the operator: without the operator key (a project key included), 401.
    expect((await request(t.app).get('/metrics')).status).toBe(401);
    expect((await request(t.app).get('/metrics').set('Authorization', `Bearer ${t.project.secretKey}`)).status).toBe(401);
    const count = async (series: RegExp): Promise<number> => {
      const metrics = await request(t.app).get('/metrics').set('Authorization', `Bearer ${t.adminKey}`);
      expect(metrics.status).toBe(200);
      return Number(series.exec(metrics.text)?.[1] ?? 0);
    };
    const notFound = /^plinth_http_requests_total\{method="DELETE",status="404"[^}]*\} (\d+)$/m;
    const deletes = /^plinth_http_request_duration_seconds_count\{[^}]*method="DELETE"[^}]*\} (\d+)$/m;
    const [before, timedBefore] = [await count(notFound), await count(deletes)];
    for (let i = 0; i < 3; i++) expect((await request(t.app).delete('/no/such/path')).status).toBe(404);
    // Each request counted once, by method and status, and timed once.
    expect(await count(notFound)).toBe(before + 3);
    expect(await count(deletes)).toBe(timedBefore + 3);
  });

  it('sets security headers and CORS', async () => {
    const res = await request(t.app).options(collections(t.project.id)).set('Origin', 'https://app.example').set('Access-Control-Request-Method', 'POST');
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    const plain = await request(t.app).get('/healthz');
    expect(plain.headers['x-content-type-options']).toBe('nosniff');
  });

  it("sets helmet's security headers, each as helmet sets it, on API answers, errors and 404s", async () => {
    const reference = express();
    reference.disable('x-powered-by');
    reference.use(helmet());
    reference.get('/', (_req, res) => {
      res.json({});
    });
    const expected = (await request(reference).get('/')).headers;
    const names = Object.keys(expected).filter((h) => !['content-type', 'content-length', 'date', 'connection', 'keep-alive', 'etag'].includes(h));
    expect(names).toEqual(expect.arrayContaining(['content-security-policy', 'strict-transport-security', 'x-frame-options', 'cross-origin-opener-policy']));
    const answers = [
      await request(t.app).get(collections(t.project.id)).set('Authorization', `Bearer ${t.project.secretKey}`),
      await request(t.app).get(collections(t.project.id)),
      await request(t.app).get('/no/such/path'),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 401, 404]);
    for (const answer of answers) {
      for (const name of names) expect([name, answer.headers[name]]).toEqual([name, expected[name]]);
    }
  });
});
