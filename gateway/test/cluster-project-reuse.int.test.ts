/**
 * Cluster: two records replicas, one of which the gateway does not list (as two pods behind one
 * Service address, where the gateway's purge reaches only one). A project is deleted and created
 * again with the same id; each replica, asked directly with a signed internal request, must
 * refuse the old tenant's user and minted tokens and take the new tenant's within a second —
 * the unlisted one learns of the deletion only from the announcement on Redis.
 */
import { randomUUID } from 'node:crypto';
import { internalHeaders } from '@plinth/shared';
import { startCluster, type Cluster } from '@plinth/gateway/testing/cluster';
import { OwnRedis } from '../../test/faults/support/own-redis';
import { onEveryProcess, readPayroll, setUpTenant, within, type Caller, type TenantKeys } from '../../test/e2e/support/tenant-reuse';

let redis: OwnRedis;
let cluster: Cluster;
const PROJECT = 'payroll-cluster';

beforeAll(async () => {
  redis = await OwnRedis.start();
  cluster = await startCluster({ env: { REDIS_URL: redis.url }, unlisted: { records: 1 } });
}, 90_000);

afterAll(async () => {
  await cluster?.stop();
  await redis?.kill();
});

/** Through the gateway (setting tenants up). */
const viaGateway: Caller = async (c) => {
  const headers: Record<string, string> = { Authorization: `Bearer ${c.key}` };
  if (c.dbUserToken) headers['X-Db-User-Token'] = c.dbUserToken;
  if (c.authUserToken) headers['X-Auth-User-Token'] = c.authUserToken;
  if (c.body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(`${cluster.url}/v1/projects/${PROJECT}${c.path}`, {
    method: c.method ?? 'GET',
    headers,
    body: c.body === undefined ? undefined : JSON.stringify(c.body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as unknown) : null, via: 'gateway' };
};

/** Straight to the records replicas, in turn, signed as the gateway signs (public key). */
function viaRecordsReplicas(): { caller: Caller; names: string[] } {
  const replicas = cluster.processes.filter((p) => p.name.startsWith('records-'));
  let next = 0;
  const caller: Caller = async (c) => {
    const replica = replicas[next++ % replicas.length]!;
    const path = `/v1/projects/${PROJECT}${c.path}`;
    const id = { project: PROJECT, keyKind: 'public' as const, requestId: randomUUID() };
    const res = await fetch(replica.url + path, {
      headers: { ...internalHeaders(cluster.internalSecret, id, { method: 'GET', path }), 'X-Db-User-Token': c.dbUserToken ?? '' },
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as unknown) : null, via: replica.name };
  };
  return { caller, names: replicas.map((r) => r.name) };
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
  // Each replica verifies every old token, so each caches the old tenant's keys.
  for (const token of Object.values(old)) {
    const warm = await onEveryProcess(names, () => readPayroll(direct, oldKeys, token));
    expect(warm.map((r) => [r.status, r.salaries])).toEqual(warm.map(() => [200, ['old']]));
  }

  const deleted = await fetch(`${cluster.url}/v1/admin/projects/${PROJECT}`, { method: 'DELETE', headers: { Authorization: `Bearer ${cluster.adminKey}` } });
  expect(deleted.status).toBe(200);
  const newKeys = await createProject();
  const fresh = await setUpTenant(viaGateway, newKeys, 'new');

  for (const token of Object.values(old)) {
    const replies = await onEveryProcess(names, () => readPayroll(direct, newKeys, token), 2);
    expect(replies.map((r) => [r.status, r.salaries])).toEqual(replies.map(() => [401, []]));
  }
  for (const token of Object.values(fresh)) {
    const replies = await within(1000, async () => {
      const r = await onEveryProcess(names, () => readPayroll(direct, newKeys, token), 2);
      return { done: r.every((x) => x.status === 200), value: r };
    });
    expect(replies.map((r) => [r.via, r.status, r.salaries])).toEqual(replies.map((r) => [r.via, 200, ['new']]));
  }
}, 90_000);
