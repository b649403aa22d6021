/**
 * Cluster: two records replicas, one of which the gateway does not list (as two pods behind one
 * Service address, where the gateway's purge reaches only one), each asked directly with a
 * signed internal request.
 * - A project is deleted and created again with the same id: each replica must refuse the old
 *   tenant's user and minted tokens and take the new tenant's within a second — the unlisted one
 *   learns of the deletion only from the announcement on Redis. An unlisted auth replica, which
 *   signed for the old tenant, must sign the new tenant's tokens with the new tenant's key.
 * - Tokens minted for an Auth user are refused by each replica once the user is disabled, or deleted.
 */
import { randomUUID } from 'node:crypto';
import { internalHeaders } from '@plinth/shared';
import { startCluster, type Cluster } from '@plinth/testing/cluster';
import { OwnRedis } from '../../test/faults/support/own-redis';
import { onEveryProcess, readPayroll, setUpTenant, within, type Caller, type TenantKeys } from '../../test/e2e/support/tenant-reuse';

let redis: OwnRedis;
let cluster: Cluster;
const PROJECT = 'payroll-cluster';
const MINTED_PROJECT = 'minted-cluster';

beforeAll(async () => {
  redis = await OwnRedis.start();
  cluster = await startCluster({ env: { REDIS_URL: redis.url }, unlisted: { records: 1, auth: 1 } });
}, 90_000);

afterAll(async () => {
  await cluster?.stop();
  await redis?.kill();
});

/** Through the gateway (setting tenants up). */
const viaGateway: Caller = (c) => gatewayCall(PROJECT, c);
const gatewayCall = async (project: string, c: Parameters<Caller>[0]): ReturnType<Caller> => {
  const headers: Record<string, string> = { Authorization: `Bearer ${c.key}` };
  if (c.dbUserToken) headers['X-Db-User-Token'] = c.dbUserToken;
  if (c.authUserToken) headers['X-Auth-User-Token'] = c.authUserToken;
  if (c.body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(`${cluster.url}/v1/projects/${project}${c.path}`, {
    method: c.method ?? 'GET',
    headers,
    body: c.body === undefined ? undefined : JSON.stringify(c.body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as unknown) : null, via: 'gateway' };
};

/** Straight to the records replicas, in turn, signed as the gateway signs (public key). */
function viaRecordsReplicas(project = PROJECT): { caller: Caller; names: string[] } {
  const replicas = cluster.processes.filter((p) => p.name.startsWith('records-'));
  let next = 0;
  const caller: Caller = async (c) => {
    const replica = replicas[next++ % replicas.length]!;
    const path = `/v1/projects/${project}${c.path}`;
    const id = { project, keyKind: 'public' as const, requestId: randomUUID() };
    const res = await fetch(replica.url + path, {
      headers: { ...internalHeaders(cluster.internalSecret, id, { method: 'GET', path }), 'X-Db-User-Token': c.dbUserToken ?? '' },
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as unknown) : null, via: replica.name };
  };
  return { caller, names: replicas.map((r) => r.name) };
}

/** Mints on the auth replica the gateway does not list, straight (secret key kind). */
async function mintOnUnlistedAuth(userId: string): Promise<string> {
  const auth = cluster.processes.find((p) => p.name === 'auth-unlisted-0')!;
  const path = `/v1/projects/${PROJECT}/auth/tokens`;
  const body = JSON.stringify({ user_id: userId, claims: { role: 'hr' } });
  const id = { project: PROJECT, keyKind: 'secret' as const, requestId: randomUUID() };
  const res = await fetch(auth.url + path, {
    method: 'POST',
    headers: { ...internalHeaders(cluster.internalSecret, id, { method: 'POST', path }, body), 'Content-Type': 'application/json' },
    body,
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

async function createProject(): Promise<TenantKeys> {
  const p = await cluster.createProject(PROJECT);
  return { publicKey: p.publicKey, secretKey: p.secretKey };
}

it('both records replicas refuse the old tenant\'s tokens and take the new tenant\'s within a second', async () => {
  const { caller: direct, names } = viaRecordsReplicas();
  expect(names).toEqual(['records-0', 'records-unlisted-0']);
  const oldKeys = await createProject();
  const old = await setUpTenant(viaGateway, oldKeys, 'old');
  // The unlisted auth replica signs one too, so it caches the old tenant's signing key.
  const oldByUnlisted = await mintOnUnlistedAuth('ext-unlisted');
  // Each replica verifies every old token, so each caches the old tenant's keys.
  for (const token of [...Object.values(old), oldByUnlisted]) {
    const warm = await onEveryProcess(names, () => readPayroll(direct, oldKeys, token));
    expect(warm.map((r) => [r.status, r.salaries])).toEqual(warm.map(() => [200, ['old']]));
  }

  const deleted = await fetch(`${cluster.url}/v1/admin/projects/${PROJECT}`, { method: 'DELETE', headers: { Authorization: `Bearer ${cluster.adminKey}` } });
  expect(deleted.status).toBe(200);
  const newKeys = await createProject();
  const fresh = await setUpTenant(viaGateway, newKeys, 'new');
  const freshByUnlisted = await within(1000, async () => {
    const token = await mintOnUnlistedAuth('ext-unlisted');
    return { done: (await readPayroll(direct, newKeys, token)).status === 200, value: token };
  });

  for (const token of [...Object.values(old), oldByUnlisted]) {
    const replies = await onEveryProcess(names, () => readPayroll(direct, newKeys, token), 2);
    expect(replies.map((r) => [r.status, r.salaries])).toEqual(replies.map(() => [401, []]));
  }
  for (const token of [...Object.values(fresh), freshByUnlisted]) {
    const replies = await within(1000, async () => {
      const r = await onEveryProcess(names, () => readPayroll(direct, newKeys, token), 2);
      return { done: r.every((x) => x.status === 200), value: r };
    });
    expect(replies.map((r) => [r.via, r.status, r.salaries])).toEqual(replies.map((r) => [r.via, 200, ['new']]));
  }
}, 90_000);

it('each records replica refuses tokens minted for an Auth user once the user is disabled, or deleted', async () => {
  const { caller: direct, names } = viaRecordsReplicas(MINTED_PROJECT);
  const created = await cluster.createProject(MINTED_PROJECT);
  const keys = { publicKey: created.publicKey, secretKey: created.secretKey };
  const call: Caller = (c) => gatewayCall(MINTED_PROJECT, c);
  const tenant = await setUpTenant(call, keys, 'minted');
  const statuses = async (token: string) => (await onEveryProcess(names, () => readPayroll(direct, keys, token), 2)).map((r) => r.status);
  expect(await statuses(tenant.mintedForUser)).toEqual([200, 200, 200, 200]);

  const users = await call({ path: '/auth/users', key: keys.secretKey });
  const userId = (users.body as { users: Array<{ id: string }> }).users[0]!.id;
  expect((await call({ method: 'PATCH', path: `/auth/users/${userId}`, key: keys.secretKey, body: { status: 'disabled' } })).status).toBe(200);
  expect(await statuses(tenant.mintedForUser)).toEqual([401, 401, 401, 401]);
  expect(await statuses(tenant.mintedOutside)).toEqual([200, 200, 200, 200]);

  const second = await call({ method: 'POST', path: '/auth/signup', key: keys.publicKey, body: { email: 'second@minted.example', password: 'correct horse battery' } });
  const secondId = (second.body as { user: { id: string } }).user.id;
  const minted = await call({ method: 'POST', path: '/auth/tokens', key: keys.secretKey, body: { user_id: secondId, claims: { role: 'hr' } } });
  const token = (minted.body as { access_token: string }).access_token;
  expect(await statuses(token)).toEqual([200, 200, 200, 200]);
  expect((await call({ method: 'DELETE', path: `/auth/users/${secondId}`, key: keys.secretKey })).status).toBe(200);
  expect(await statuses(token)).toEqual([401, 401, 401, 401]);
}, 90_000);
