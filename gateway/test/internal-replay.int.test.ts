/**
 * Cluster mode: a credential the gateway put on one forwarded request cannot be replayed against
 * a service, neither as is nor for another method, path or body. The requests are captured on
 * the wire between a real gateway (proxy transport) and a real service process-like listener.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Router } from 'express';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import {
  REQUEST_REDIS_OPTIONS,
  RedisNonceStore,
  asProjectId,
  bodyDigest,
  createLogger,
  createServiceApp,
  internalHeaders,
  redisBreaker,
  requestContext,
  signInternal,
} from '@plinth/shared';
import { createGatewayApp } from '../src/app';
import { generateKey } from '../src/keys';
import { SqliteProjectStore } from '../src/store/sqlite-project-store';
import { proxyUpstream } from '../src/upstreams';

const logger = createLogger('test', 'silent');
const SECRET = 'internal-secret-for-replay-tests-0123456789';

interface Captured {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: Buffer;
}

async function listen(handler: http.RequestListener): Promise<{ url: string; server: http.Server }> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function close(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
}

/** Sends a captured request (optionally altered) straight to the service, as an attacker inside the network would. */
async function replay(
  serviceUrl: string,
  c: Captured,
  change: Partial<Pick<Captured, 'method' | 'url'>> & { body?: string; headers?: Record<string, string> } = {},
) {
  const headers = {
    ...Object.fromEntries(Object.entries(c.headers).filter(([k]) => k.startsWith('x-plinth-') || k === 'x-request-id' || k === 'content-type')),
    ...change.headers,
  };
  const body = change.body ?? (c.body.length > 0 ? c.body : undefined);
  const res = await fetch(serviceUrl + (change.url ?? c.url), { method: change.method ?? c.method, headers, body });
  return { status: res.status, body: (await res.json()) as { error?: string; done?: unknown } };
}

describe('internal credential replay (gateway → service over the network)', () => {
  const store = new SqliteProjectStore(':memory:', { internalSecret: SECRET });
  const writes: unknown[] = [];
  let service: { url: string; server: http.Server };
  let tap: { url: string; server: http.Server };
  let gateway: { url: string; server: http.Server };
  const captured: Captured[] = [];
  /** When false, the tap keeps the request to itself (it never reaches the service). */
  let forward = true;
  let secretKey = '';
  let upstreamClose = () => {};

  beforeAll(async () => {
    const routes = Router();
    routes.post('/v1/projects/:project/collections/:name/records', (req, res) => {
      writes.push({ collection: req.params.name, body: req.body });
      res.status(201).json({ done: req.body, by: requestContext(res).keyKind });
    });
    routes.delete('/v1/projects/:project/collections/:name', (req, res) => {
      writes.push({ deleted: req.params.name });
      res.json({ done: 'deleted' });
    });
    service = await listen(createServiceApp({ name: 'records', internalSecret: SECRET, logger, routes }));
    // A tap between gateway and service: records what crosses the wire, forwards it (or not).
    tap = await listen((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const c: Captured = { method: req.method!, url: req.url!, headers: req.headers as Record<string, string>, body: Buffer.concat(chunks) };
        captured.push(c);
        if (!forward) {
          res.writeHead(202, { 'content-type': 'application/json' }).end('{"held":true}');
          return;
        }
        const headers = { ...req.headers };
        const up = http.request(service.url + c.url, { method: c.method, headers }, (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        });
        up.end(c.body);
      });
    });
    const upstream = proxyUpstream('records', [tap.url], logger, SECRET);
    upstreamClose = () => upstream.close();
    const p = asProjectId('shop');
    const sec = generateKey(p, 'secret');
    secretKey = sec.value;
    await store.createProject({ id: p, name: 'shop', created_at: new Date().toISOString() }, [sec.record]);
    const { app } = createGatewayApp({
      store,
      upstreams: { records: upstream, auth: upstream, mailer: upstream },
      adminKey: 'adm_replay_test_key_0123456789',
      logger,
      corsOrigins: '*',
      keyCacheTtlMs: 0,
    });
    gateway = await listen(app);
  });

  afterAll(async () => {
    upstreamClose();
    for (const s of [gateway, tap, service]) if (s) await close(s.server);
    await store.close();
  });

  async function viaGateway(method: string, path: string, body?: object) {
    const res = await fetch(gateway.url + path, {
      method,
      headers: { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return res.status;
  }

  it('refuses a captured credential replayed as is, or for another method, path or body', async () => {
    // 1. A genuine request, forwarded to the service: its credential is now spent.
    forward = true;
    expect(await viaGateway('POST', '/v1/projects/shop/collections/orders/records', { data: { amount: 1 } })).toBe(201);
    const spent = captured.at(-1)!;
    expect(writes).toHaveLength(1);

    // 2. A genuine request captured but held back: its credential was never used.
    forward = false;
    expect(await viaGateway('POST', '/v1/projects/shop/collections/orders/records', { data: { amount: 2 } })).toBe(202);
    const fresh = captured.at(-1)!;

    // The fresh credential, bent to another operation or body: refused.
    expect((await replay(service.url, fresh, { url: '/v1/projects/shop/collections/invoices/records' })).status).toBe(401);
    expect((await replay(service.url, fresh, { method: 'DELETE', url: '/v1/projects/shop/collections/orders' })).status).toBe(401);
    expect((await replay(service.url, fresh, { method: 'PUT' })).status).toBe(401);
    const otherBody = await replay(service.url, fresh, { body: JSON.stringify({ data: { amount: 1_000_000 } }) });
    expect(otherBody).toEqual({ status: 401, body: expect.objectContaining({ error: 'unauthorized' }) });
    // …or to another client address or key (what rate limits count by): refused.
    expect(fresh.headers['x-plinth-client-address']).toMatch(/127\.0\.0\.1$/);
    expect((await replay(service.url, fresh, { headers: { 'x-plinth-client-address': '198.51.100.9' } })).status).toBe(401);
    expect((await replay(service.url, fresh, { headers: { 'x-plinth-key-id': 'key_other' } })).status).toBe(401);

    // The spent credential, replayed exactly: refused.
    expect((await replay(service.url, spent)).status).toBe(401);

    // Nothing above reached the routes: only the first genuine request was carried out.
    expect(writes).toEqual([{ collection: 'orders', body: { data: { amount: 1 } } }]);
  });

  it('carries bodies intact and accepts a credential once', async () => {
    forward = false;
    expect(await viaGateway('POST', '/v1/projects/shop/collections/orders/records', { data: { amount: 3, note: 'é ✓' } })).toBe(202);
    const held = captured.at(-1)!;
    const first = await replay(service.url, held);
    expect(first).toEqual({ status: 201, body: { done: { data: { amount: 3, note: 'é ✓' } }, by: 'secret' } });
    expect((await replay(service.url, held)).status).toBe(401);
  });
});

describe('internal credential replay across replicas (nonces shared in Redis)', () => {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const prefix = `test:nonce:${randomBytes(6).toString('hex')}:`;
  const replicas: Array<{ url: string; server: http.Server }> = [];

  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      const routes = Router();
      routes.post('/v1/projects/:project/collections/:name/records', (req, res) => {
        res.status(201).json({ replica: i, done: req.body });
      });
      const nonceStore = new RedisNonceStore(redis, prefix);
      replicas.push(await listen(createServiceApp({ name: 'records', internalSecret: SECRET, logger, routes, nonceStore })));
    }
  });

  afterAll(async () => {
    for (const r of replicas) await close(r.server);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('refuses at one replica a credential another replica accepted', async () => {
    const path = '/v1/projects/shop/collections/orders/records';
    const body = JSON.stringify({ data: { amount: 5 } });
    const headers = {
      ...internalHeaders(SECRET, { project: 'shop', keyKind: 'secret', requestId: 'req-x' }, { method: 'POST', path }, body),
      'content-type': 'application/json',
    };
    const send = (i: number, h: Record<string, string>) => fetch(replicas[i]!.url + path, { method: 'POST', headers: h, body });
    expect((await send(0, headers)).status).toBe(201);
    expect((await send(1, headers)).status).toBe(401);
    expect((await send(0, headers)).status).toBe(401);
    // A fresh credential for the same operation is accepted by the other replica.
    const fresh = { ...internalHeaders(SECRET, { project: 'shop', keyKind: 'secret', requestId: 'req-x' }, { method: 'POST', path }, body), 'content-type': 'application/json' };
    expect((await send(1, fresh)).status).toBe(201);
  });
});

describe('internal credentials while the shared nonce store (Redis) is away', () => {
  // A Redis nobody listens on: the real client, failing as it does when Redis is down.
  const redis = new Redis('redis://127.0.0.1:9', { ...REQUEST_REDIS_OPTIONS });
  redis.on('error', () => {});
  let replica: { url: string; server: http.Server };
  const path = '/v1/projects/shop/collections/orders/records';
  const body = JSON.stringify({ data: { amount: 7 } });
  const id = { project: 'shop', keyKind: 'secret' as const, requestId: 'req-fallback' };

  beforeAll(async () => {
    const routes = Router();
    routes.post('/v1/projects/:project/collections/:name/records', (req, res) => {
      res.status(201).json({ done: req.body });
    });
    const nonceStore = new RedisNonceStore(redis, 'test:nonce:unreachable:', { breaker: redisBreaker(redis) });
    replica = await listen(createServiceApp({ name: 'records', internalSecret: SECRET, logger, routes, nonceStore }));
  });

  afterAll(async () => {
    await close(replica.server);
    redis.disconnect();
  });

  const send = (credentialAtMs: number) => {
    const headers = {
      ...internalHeaders(SECRET, id, { method: 'POST', path }, body),
      'x-plinth-internal': signInternal(SECRET, id, { method: 'POST', path }, bodyDigest(body), credentialAtMs),
      'content-type': 'application/json',
    };
    return { headers, go: () => fetch(replica.url + path, { method: 'POST', headers, body }) };
  };

  it("accepts a fresh credential once on this replica's own nonce cache, and refuses one too old for that window with 503", async () => {
    const fresh = send(Date.now());
    expect((await fresh.go()).status).toBe(201);
    expect((await fresh.go()).status).toBe(401);
    // Valid for 60 s with Redis up, but beyond the narrower window a replica accepts on its own.
    const older = await send(Date.now() - 30_000).go();
    expect(older.status).toBe(503);
    expect(((await older.json()) as { error: string }).error).toBe('unavailable');
  });
});
