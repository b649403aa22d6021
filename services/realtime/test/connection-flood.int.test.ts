/**
 * Connection floods and message floods, against `npm start`'s entry as its own
 * process with small limits from the environment: one public key's connections from one address
 * are refused past their share (close 4029) while the secret key and a signed-in user elsewhere
 * still connect; the process refuses sockets past REALTIME_MAX_CONNECTIONS (close 1013) while
 * /healthz keeps answering; a connection past its message rate, pings included, is closed (4009).
 * Clients use other loopback addresses (127.0.0.x) as other machines.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WebSocket } from 'ws';
import { freshRequest, startStandalone, stopStandalone, type StandaloneProcess } from '@plinth/testing/standalone-process';
import { CLOSE } from '@plinth/realtime';
import { RtClient, wsUrl } from './support/rt-client';

const PER_ADDRESS = 50;
const PER_PROCESS = 120;
const ATTEMPTS = 20_000;
const IN_FLIGHT = 100;

let s: StandaloneProcess;
let dataDir: string;
const held: WebSocket[] = [];

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-conn-flood-'));
  s = await startStandalone(dataDir, {
    REALTIME_MAX_CONNECTIONS_PER_ADDRESS: String(PER_ADDRESS),
    REALTIME_MAX_CONNECTIONS: String(PER_PROCESS),
    REALTIME_MESSAGES_PER_SECOND: '20',
    REALTIME_MESSAGE_BURST: '50',
    PLINTH_RATE_LIMIT_IP: '100000',
  });
  const res = await freshRequest(`${s.url}/v1/projects/demo/collections`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${s.secretKey}` },
    body: { name: 'wall', fields: { text: { type: 'text' } }, rules: { read: 'true' } },
  });
  expect(res.status).toBe(201);
  expect((await freshRequest(`${s.url}/v1/projects/demo/settings/auth`, { method: 'PATCH', headers: { Authorization: `Bearer ${s.secretKey}` }, body: { enabled: true } })).status).toBe(200);
}, 60_000);

afterEach(() => {
  for (const ws of held.splice(0)) ws.terminate();
});
afterAll(async () => {
  if (s) await stopStandalone(s, 'SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** One connection attempt with the public key from `from`: 'open' (kept in `held`) or the close code. */
function attempt(from: string): Promise<'open' | number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(wsUrl(s.url, 'demo', { queryKey: s.publicKey }), { localAddress: from });
    let welcomed = false;
    ws.on('message', (data) => {
      if ((JSON.parse(data.toString()) as { type: string }).type !== 'welcome') return;
      welcomed = true;
      held.push(ws);
      resolve('open');
    });
    ws.on('close', (code) => {
      if (!welcomed) resolve(code);
    });
    ws.on('error', () => {});
  });
}

/** Polls /healthz every 50 ms on fresh connections until stopped; resolves with the failures. */
function watchHealth(): { stop: () => Promise<string[]> } {
  const failures: string[] = [];
  let watching = true;
  const loop = (async () => {
    while (watching) {
      try {
        const res = await freshRequest(`${s.url}/healthz`, { timeoutMs: 5000 });
        if (res.status !== 200) failures.push(`healthz ${res.status}`);
      } catch (err) {
        failures.push(`healthz: ${(err as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return {
    stop: async () => {
      watching = false;
      await loop;
      return failures;
    },
  };
}

it('20,000 connection attempts with one public key from one address: past its share refused with 4029; the secret key and a signed-in user elsewhere still connect; /healthz answers', async () => {
  const health = watchHealth();
  const outcomes = new Map<string | number, number>();
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < ATTEMPTS) {
        next++;
        const got = await attempt('127.0.0.1');
        outcomes.set(got, (outcomes.get(got) ?? 0) + 1);
        // Without a share, the flood would hold the process's descriptors: let go past the share.
        if (got === 'open' && held.length > PER_ADDRESS) held.pop()!.terminate();
      }
    }),
  );
  expect(outcomes.get('open')).toBe(PER_ADDRESS);
  expect(outcomes.get(CLOSE.tooManyConnections)).toBe(ATTEMPTS - PER_ADDRESS);

  // The same project's secret key (a server) connects, and so does a user signing in from elsewhere.
  const server = await RtClient.connect(s.url, 'demo', { headerKey: s.secretKey });
  expect(await server.subscribe('w', { collection: 'wall' })).toMatchObject({ type: 'subscribed' });
  const signup = await freshRequest(`${s.url}/v1/projects/demo/auth/signup`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${s.publicKey}` },
    body: { email: `flooded-${Date.now()}@flood.example.com`, password: 'correct horse battery' },
  });
  expect(signup.status).toBe(201);
  const userSocket = new WebSocket(wsUrl(s.url, 'demo', { queryKey: s.publicKey }), { localAddress: '127.0.0.2' });
  const user = await RtClient.wrap(userSocket);
  user.send({ type: 'auth', token: (signup.body as { access_token: string }).access_token });
  expect(await user.subscribe('w', { collection: 'wall' })).toMatchObject({ type: 'subscribed' });
  const write = await freshRequest(`${s.url}/v1/projects/demo/collections/wall/records`, { method: 'POST', headers: { Authorization: `Bearer ${s.secretKey}` }, body: { data: { text: 'still here' } } });
  expect(write.status).toBe(201);
  await user.waitForEvents('w', 1);
  await server.waitForEvents('w', 1);
  server.close();
  user.close();
  expect(await health.stop()).toEqual([]);
}, 180_000);

it('past REALTIME_MAX_CONNECTIONS the process refuses new sockets with 1013, and /healthz keeps answering', async () => {
  const health = watchHealth();
  const outcomes: Array<'open' | number> = [];
  for (const from of ['127.0.0.3', '127.0.0.4', '127.0.0.5']) {
    outcomes.push(...(await Promise.all(Array.from({ length: PER_ADDRESS }, () => attempt(from)))));
  }
  expect(outcomes.filter((o) => o === 'open')).toHaveLength(PER_PROCESS);
  expect(outcomes.filter((o) => o === CLOSE.serverFull)).toHaveLength(3 * PER_ADDRESS - PER_PROCESS);
  expect(await health.stop()).toEqual([]);
}, 60_000);

it('a connection sending past its message rate, pings included, is told and closed with 4009; a calm one is not', async () => {
  const pinger = await RtClient.connect(s.url, 'demo', { queryKey: s.publicKey });
  const calm = await RtClient.connect(s.url, 'demo', { queryKey: s.publicKey });
  for (let i = 0; i < 200; i++) pinger.ws.ping();
  expect(await pinger.closed).toMatchObject({ code: CLOSE.tooManyMessages });
  expect(pinger.messages.some((m) => m.type === 'error' && m.error === 'rate_limited')).toBe(true);
  const chatty = await RtClient.connect(s.url, 'demo', { queryKey: s.publicKey });
  for (let i = 0; i < 200; i++) chatty.send({ type: 'ping' });
  expect(await chatty.closed).toMatchObject({ code: CLOSE.tooManyMessages });
  expect(chatty.messages.filter((m) => m.type === 'pong').length).toBeLessThanOrEqual(50);
  calm.send({ type: 'ping' });
  await calm.next((m) => m.type === 'pong');
  calm.close();
});
