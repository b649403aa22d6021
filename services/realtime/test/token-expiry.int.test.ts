/**
 * Token expiry on the realtime service itself (the gateway and records are replaced by a signed
 * upgrade and a stub subscribe resolver, so a token can expire within a second): delivery pauses
 * with auth_expired, and a new auth resumes it with the events missed meanwhile, in order.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket } from 'ws';
import { INTERNAL_HEADERS, SqliteEventBus, asProjectId, createLogger, loadConfig, signInternal, type RecordDoc, type ResolveSubscription } from '@plinth/shared';
import { buildRealtimeService, realtimeConfigSchema, type RealtimeService } from '@plinth/realtime';
import { RtClient } from './support/rt-client';

const SECRET = 'x'.repeat(40);
const project = asProjectId('expiry-test');
let bus: SqliteEventBus;
let service: RealtimeService;
let server: http.Server;
let url: string;
const resolved: string[] = [];

/** A token-shaped string: only its claims are read here (records verifies real tokens). */
function token(expInSeconds: number): string {
  const now = Math.floor(Date.now() / 1000);
  const claims = Buffer.from(JSON.stringify({ sub: 'usr_1', sid: 'ses_1', iat: now, exp: now + expInSeconds })).toString('base64url');
  return `e30.${claims}.sig`;
}

const resolve: ResolveSubscription = async (call) => {
  resolved.push(call.userToken ?? 'anonymous');
  return { collection: call.collection, revision: 1, predicate: true, order: { orderBy: 'created_at', direction: 'asc' }, limit: 50, expires_at: null };
};

beforeAll(async () => {
  bus = new SqliteEventBus({ file: ':memory:' });
  const config = loadConfig(realtimeConfigSchema, { PLINTH_INTERNAL_SECRET: SECRET });
  service = await buildRealtimeService(config, createLogger('rt-test', 'silent'), { events: bus, resolve });
  server = http.createServer(service.app);
  server.on('upgrade', service.handleUpgrade);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await service.closeConnections();
  await service.close();
  await new Promise((r) => server.close(r));
  await bus.close();
});

function publish(n: number): Promise<number> {
  const record: RecordDoc = { id: `rec_${n}`, version: 1, created_at: 't', updated_at: 't', n };
  return bus.publish({ project, collection: 'notes', kind: 'create', record, committed_at: Date.now() });
}

async function connect(): Promise<RtClient> {
  const requestId = 'req-1';
  const path = `/v1/projects/${project}/realtime`;
  const ws = new WebSocket(`${url.replace('http', 'ws')}${path}`, {
    headers: {
      [INTERNAL_HEADERS.project]: project,
      [INTERNAL_HEADERS.keyKind]: 'public',
      [INTERNAL_HEADERS.requestId]: requestId,
      [INTERNAL_HEADERS.credential]: signInternal(SECRET, { project, keyKind: 'public', requestId }, { method: 'GET', path }),
    },
  });
  return RtClient.wrap(ws);
}

it('refuses an upgrade that did not come through the gateway', async () => {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/projects/${project}/realtime`);
  const status = await new Promise<number>((r) => ws.on('unexpected-response', (_q, res) => r(res.statusCode ?? 0)));
  expect(status).toBe(401);
});

it('pauses at expiry with auth_expired, and a new auth resumes with what was missed, in order', async () => {
  const c = await connect();
  // Expires 1–2 s from now (claims are whole seconds): time enough to subscribe and get one event.
  c.send({ type: 'auth', token: token(2) });
  await c.next((m) => m.type === 'auth_ok');
  await c.subscribe('n', { collection: 'notes' });
  await publish(1);
  await c.waitForEvents('n', 1);
  expect(await c.next((m) => m.type === 'auth_expired')).toMatchObject({ paused: ['n'] });
  await publish(2);
  await publish(3);
  // Nothing is delivered while paused: a marker round-trip proves the server is past both.
  c.send({ type: 'ping' });
  await c.next((m) => m.type === 'pong');
  expect(c.events('n')).toHaveLength(1);
  const fresh = token(600);
  c.send({ type: 'auth', token: fresh });
  const events = await c.waitForEvents('n', 3);
  expect(events.map((e) => e.record.id)).toEqual(['rec_1', 'rec_2', 'rec_3']);
  expect(resolved.slice(-1)).toEqual([fresh]);
  await publish(4);
  expect((await c.waitForEvents('n', 4)).map((e) => e.record.id)).toEqual(['rec_1', 'rec_2', 'rec_3', 'rec_4']);
  c.close();
});
