import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Router } from 'express';
import request from 'supertest';
import { asProjectId, clientGoneSignal, createLogger, createServiceApp, requestContext, requireSecretKey, signInternal } from '@plinth/shared';
import { waitFor } from '@plinth/shared/testing/wait-for';
import { createGatewayApp } from '../src/app';
import { generateKey } from '../src/keys';
import { SqliteProjectStore } from '../src/store/sqlite-project-store';
import { inProcessUpstream, proxyUpstream, type Upstream } from '../src/upstreams';

const logger = createLogger('test', 'silent');
const SECRET = 'internal-secret-for-tests-0123456789abcdef';

/** Requests the test service's `hold` route has seen, and how many of their clients went away. */
const held = { arrived: 0, gone: 0 };

/** A service built on the real chassis, with routes that exercise what the gateway must guarantee. */
function testService() {
  const routes = Router();
  routes.get('/v1/projects/:project/collections/whoami', (_req, res) => {
    res.json(requestContext(res));
  });
  routes.post('/v1/projects/:project/collections/secret-only', (req, res) => {
    requireSecretKey(res);
    res.status(201).json({ got: req.body });
  });
  routes.post('/v1/projects/:project/collections/hold', (_req, res) => {
    held.arrived += 1;
    clientGoneSignal(res).addEventListener('abort', () => (held.gone += 1));
  });
  routes.get('/v1/projects/:project/collections/boom', () => {
    throw new Error('database password is hunter2');
  });
  routes.get('/v1/projects/:project/collections/boom-async', async () => {
    await Promise.resolve();
    throw new Error('async failure');
  });
  return createServiceApp({ name: 'records', internalSecret: SECRET, logger, routes });
}

async function listen(handler: http.RequestListener): Promise<{ url: string; server: http.Server }> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const transports: Array<[string, () => Promise<{ upstream: Upstream; stop: () => Promise<void> }>]> = [
  ['in-process', async () => ({ upstream: inProcessUpstream(testService()), stop: async () => {} })],
  [
    'proxy',
    async () => {
      const svc = await listen(testService());
      const upstream = proxyUpstream('records', [svc.url], logger, SECRET);
      return {
        upstream,
        stop: async () => {
          upstream.close();
          svc.server.closeAllConnections();
          await new Promise((r) => svc.server.close(r));
        },
      };
    },
  ],
];

describe.each(transports)('gateway over the %s transport', (_name, makeUpstream) => {
  const store = new SqliteProjectStore(':memory:', { internalSecret: SECRET });
  const project = asProjectId('shop');
  const pub = generateKey(project, 'public');
  const sec = generateKey(project, 'secret');
  let app: http.RequestListener;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    await store.createProject({ id: project, name: 'Shop', created_at: new Date().toISOString() }, [pub.record, sec.record]);
    const made = await makeUpstream();
    stop = made.stop;
    const dead = proxyUpstream('auth', ['http://127.0.0.1:9'], logger, SECRET);
    app = createGatewayApp({
      store,
      upstreams: { records: made.upstream, auth: dead, mailer: dead },
      adminKey: 'adm_operator-key-for-tests-000000',
      logger,
      corsOrigins: '*',
      keyCacheTtlMs: 1000,
    }).app;
  });
  afterAll(async () => {
    await stop();
    await store.close();
  });

  it("forwards the project, key kind, key id, request id and the client's address to the service", async () => {
    const res = await request(app).get('/v1/projects/shop/collections/whoami').set('Authorization', `Bearer ${pub.value}`).set('X-Request-Id', 'req-42');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ project: 'shop', keyKind: 'public', keyId: pub.record.id, requestId: 'req-42', clientAddress: expect.stringMatching(/127\.0\.0\.1$/) });
    expect(res.headers['x-request-id']).toBe('req-42');
  });

  it('ignores identity headers forged by the client', async () => {
    const res = await request(app)
      .get('/v1/projects/shop/collections/whoami')
      .set('Authorization', `Bearer ${pub.value}`)
      .set('X-Plinth-Key-Kind', 'secret')
      .set('X-Plinth-Project', 'other')
      .set('X-Plinth-Key-Id', sec.record.id)
      .set('X-Plinth-Client-Address', '198.51.100.1')
      .set('X-Forwarded-For', '198.51.100.2');
    // No proxy is trusted here (PLINTH_TRUST_PROXY=0): the address is the connection's.
    expect(res.body).toMatchObject({ project: 'shop', keyKind: 'public', keyId: pub.record.id, clientAddress: expect.stringMatching(/127\.0\.0\.1$/) });
  });

  it('refuses a public key on a secret route with 403, and lets the secret key through', async () => {
    const denied = await request(app).post('/v1/projects/shop/collections/secret-only').set('Authorization', `Bearer ${pub.value}`).send({ a: 1 });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toBe('forbidden');
    const allowed = await request(app).post('/v1/projects/shop/collections/secret-only').set('Authorization', `Bearer ${sec.value}`).send({ a: 1 });
    expect(allowed.status).toBe(201);
    expect(allowed.body).toEqual({ got: { a: 1 } });
  });

  it('turns a throwing handler into a 500 envelope that hides the cause, and keeps serving', async () => {
    for (const path of ['boom', 'boom-async']) {
      const res = await request(app).get(`/v1/projects/shop/collections/${path}`).set('Authorization', `Bearer ${sec.value}`);
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: 'internal', message: 'Something went wrong.' });
      expect(res.text).not.toContain('hunter2');
    }
    const after = await request(app).get('/v1/projects/shop/collections/whoami').set('Authorization', `Bearer ${sec.value}`);
    expect(after.status).toBe(200);
  });

  it('answers a malformed JSON body with 400 invalid_request', async () => {
    const res = await request(app)
      .post('/v1/projects/shop/collections/secret-only')
      .set('Authorization', `Bearer ${sec.value}`)
      .set('Content-Type', 'application/json')
      .send('{"a":');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  it('lets the service see a client that goes away before its answer (work queued for it is dropped)', async () => {
    const gateway = await listen(app);
    try {
      const before = { ...held };
      const client = http.request(`${gateway.url}/v1/projects/shop/collections/hold`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${pub.value}`, 'Content-Type': 'application/json' },
      });
      client.on('error', () => {}); // destroyed below, on purpose
      client.end(JSON.stringify({ wait: true }));
      await waitFor('the service to hold the request', () => held.arrived === before.arrived + 1);
      client.destroy();
      await waitFor('the service to see the client gone', () => held.gone === before.gone + 1);
    } finally {
      gateway.server.closeAllConnections();
      await new Promise((r) => gateway.server.close(r));
    }
  });

  it('answers 503 unavailable when a service cannot be reached', async () => {
    const res = await request(app).post('/v1/projects/shop/auth/signin').set('Authorization', `Bearer ${pub.value}`).send({});
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('unavailable');
  });
});

describe('a service reached directly, not through the gateway', () => {
  const svc = testService();

  it('refuses requests without the internal credential', async () => {
    const res = await request(svc).get('/v1/projects/shop/collections/whoami').set('X-Plinth-Project', 'shop').set('X-Plinth-Key-Kind', 'secret');
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('unauthorized');
  });

  it('refuses a credential signed with another secret, or for another identity', async () => {
    const path = '/v1/projects/shop/collections/whoami';
    const op = { method: 'GET', path };
    const forged = signInternal('some-other-secret-0123456789abcdefgh', { project: 'shop', keyKind: 'secret', requestId: 'r1' }, op);
    const a = await request(svc)
      .get(path)
      .set({ 'X-Plinth-Project': 'shop', 'X-Plinth-Key-Kind': 'secret', 'X-Request-Id': 'r1', 'X-Plinth-Internal': forged });
    expect(a.status).toBe(401);
    const forPublic = signInternal(SECRET, { project: 'shop', keyKind: 'public', requestId: 'r1' }, op);
    const b = await request(svc)
      .get(path)
      .set({ 'X-Plinth-Project': 'shop', 'X-Plinth-Key-Kind': 'secret', 'X-Request-Id': 'r1', 'X-Plinth-Internal': forPublic });
    expect(b.status).toBe(401);
    const forOther = signInternal(SECRET, { project: 'other', keyKind: 'secret', requestId: 'r1' }, op);
    const c = await request(svc)
      .get(path)
      .set({ 'X-Plinth-Project': 'other', 'X-Plinth-Key-Kind': 'secret', 'X-Request-Id': 'r1', 'X-Plinth-Internal': forOther });
    expect(c.status).toBe(401);
  });

  it('accepts a valid credential', async () => {
    const path = '/v1/projects/shop/collections/whoami';
    const ok = signInternal(SECRET, { project: 'shop', keyKind: 'secret', requestId: 'r1' }, { method: 'GET', path });
    const res = await request(svc)
      .get(path)
      .set({ 'X-Plinth-Project': 'shop', 'X-Plinth-Key-Kind': 'secret', 'X-Request-Id': 'r1', 'X-Plinth-Internal': ok });
    expect(res.status).toBe(200);
  });

  it('serves probes without a credential', async () => {
    expect((await request(svc).get('/healthz')).status).toBe(200);
    expect((await request(svc).get('/readyz')).status).toBe(200);
  });
});
