/**
 * An expired user token is refused with 401, through the gateway, with a genuine token the
 * auth service signed with the project's key. To get one without waiting, the token is minted
 * while the process clock reads two hours ago — which only reaches the auth service when it
 * runs in this process, so this suite lives outside test/api/ (the suites run in the cluster
 * topology too, where auth has its own clock).
 */
import request from 'supertest';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { OWNER_ONLY } from './rules/doc-examples';
import { client, type Client } from './api/client';

let t: TestPlinth;
let api: Client;

beforeAll(async () => {
  t = await startTestPlinth();
  api = client(t);
  await api.post('/collections', OWNER_ONLY).expect(201);
});
afterAll(() => t.close());

const CLOCK_ONLY = ['nextTick', 'setImmediate', 'clearImmediate', 'setInterval', 'clearInterval', 'setTimeout', 'clearTimeout', 'queueMicrotask', 'hrtime', 'performance'] as const;

async function mintAt(now: number, userId: string): Promise<string> {
  jest.useFakeTimers({ now, doNotFake: [...CLOCK_ONLY] });
  try {
    return (await api.post('/auth/tokens', { user_id: userId, expires_in: 60 }).expect(200)).body.access_token;
  } finally {
    jest.useRealTimers();
  }
}

const read = (token: string) =>
  request(t.app).get(`${api.base}/collections/notes/records`).set('Authorization', `Bearer ${t.project.publicKey}`).set('X-Db-User-Token', token);

it('a token whose exp has passed → 401 reason expired; the same user with a current token reads', async () => {
  const expired = await mintAt(Date.now() - 2 * 3600_000, 'usr_expiry');
  const exp = JSON.parse(Buffer.from(expired.split('.')[1] ?? '', 'base64url').toString('utf8')).exp;
  expect(exp * 1000).toBeLessThan(Date.now());
  const refused = await read(expired);
  expect(refused.status).toBe(401);
  expect(refused.body).toMatchObject({ error: 'unauthorized', details: { header: 'X-Db-User-Token', reason: 'expired' } });

  const current = await mintAt(Date.now(), 'usr_expiry');
  expect((await read(current)).status).toBe(200);
});
