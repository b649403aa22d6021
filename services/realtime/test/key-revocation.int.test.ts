/**
 * Revoking a project key cuts the realtime sockets opened with it: within a second
 * the gateway closes them, so nothing committed a second after the revocation reaches them,
 * while sockets opened with the project's other key go on; connecting again with the revoked key
 * is refused (401). Both topologies (cluster: the gateway proxies the sockets to two realtime
 * replicas).
 */
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { projectCall, type ProjectAccess } from '../../../test/e2e/support/api';
import { RtClient, refusal, wsUrl } from './support/rt-client';

let t: TestPlinth;
let p: ProjectAccess;
let url: string;

beforeAll(async () => {
  t = await startTestPlinth({ realtimeReplicas: 2 });
  url = await t.url();
  p = { url, id: t.project.id, publicKey: t.project.publicKey, secretKey: t.project.secretKey };
  const res = await projectCall(p, 'POST', '/collections', { key: p.secretKey, body: { name: 'board', fields: { text: { type: 'text' } }, rules: { read: 'true' } } });
  expect(res.status).toBe(201);
});
afterAll(() => t.close());

async function admin<T>(method: 'POST' | 'DELETE', path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${url}/v1/admin${path}`, {
    method,
    headers: { Authorization: `Bearer ${t.adminKey}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as T };
}

it('a socket opened with a key revoked since receives nothing committed 1 s after the revocation; the other key’s socket does', async () => {
  const created = await admin<{ key: { id: string; value: string } }>('POST', `/projects/${p.id}/keys`, { kind: 'public' });
  expect(created.status).toBe(201);
  const doomed = await RtClient.connect(url, p.id, { queryKey: created.body.key.value });
  const other = await RtClient.connect(url, p.id, { queryKey: p.publicKey });
  for (const c of [doomed, other]) expect(await c.subscribe('b', { collection: 'board' })).toMatchObject({ type: 'subscribed' });

  expect((await admin('DELETE', `/projects/${p.id}/keys/${created.body.key.id}`)).status).toBe(200);
  await new Promise((r) => setTimeout(r, 1000));
  const write = await projectCall<{ record: { id: string } }>(p, 'POST', '/collections/board/records', { key: p.secretKey, body: { data: { text: 'after' } } });
  expect(write.status).toBe(201);
  await other.waitForEvents('b', 1);
  await new Promise((r) => setTimeout(r, 300)); // past the delivery to every socket
  expect(doomed.events('b')).toEqual([]);
  expect(doomed.ws.readyState).toBe(doomed.ws.CLOSED);
  expect((await refusal(wsUrl(url, p.id, { queryKey: created.body.key.value }))).status).toBe(401);
  other.close();
});
