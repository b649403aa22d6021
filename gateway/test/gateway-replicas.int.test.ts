/**
 * Cluster topology with two gateway replicas sharing Redis: a key revoked (or a project
 * deleted) through one replica stops working on the other at once — Redis pub/sub drops the
 * other replica's key cache — although the cache TTL here is ten minutes. Pub/sub writes no
 * keys in the shared Redis.
 */
import { startCluster, type Cluster } from '@plinth/testing/cluster';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
let c: Cluster;

beforeAll(async () => {
  c = await startCluster({ gateways: 2, gatewayEnv: { REDIS_URL, PLINTH_KEY_CACHE_TTL_MS: '600000' } });
}, 60_000);
afterAll(async () => {
  await c?.stop();
});

const collections = (gateway: string, project: string, key: string) =>
  fetch(`${gateway}/v1/projects/${project}/collections`, { headers: { Authorization: `Bearer ${key}` } }).then(async (r) => {
    await r.arrayBuffer();
    return r.status;
  });

/** The status on `gateway` once it is not 200 any more, or 200 if it stays so for 5 s. */
async function settled(gateway: string, project: string, key: string): Promise<number> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const status = await collections(gateway, project, key);
    if (status !== 200 || Date.now() > deadline) return status;
    await new Promise((r) => setTimeout(r, 20));
  }
}

it('a key revoked through one gateway replica is refused by the other (its cache dropped over Redis)', async () => {
  const [a, b] = c.gatewayUrls as [string, string];
  const p = await c.createProject(`replicas-${process.pid}`);
  // Both replicas have the key cached (for ten minutes).
  expect(await collections(a, p.id, p.publicKey)).toBe(200);
  expect(await collections(b, p.id, p.publicKey)).toBe(200);

  const admin = { Authorization: `Bearer ${c.adminKey}` };
  const keys = (await (await fetch(`${a}/v1/admin/projects/${p.id}`, { headers: admin })).json()) as { keys: Array<{ id: string; kind: string }> };
  const pub = keys.keys.find((k) => k.kind === 'public')!;
  expect((await fetch(`${a}/v1/admin/projects/${p.id}/keys/${pub.id}`, { method: 'DELETE', headers: admin })).status).toBe(200);

  expect(await collections(a, p.id, p.publicKey)).toBe(401);
  expect(await settled(b, p.id, p.publicKey)).toBe(401);
  // The secret key was not revoked: still served by both.
  expect(await collections(b, p.id, p.secretKey)).toBe(200);

  // A project deleted through the other replica: its remaining key stops working on the first.
  expect(await collections(a, p.id, p.secretKey)).toBe(200);
  expect((await fetch(`${b}/v1/admin/projects/${p.id}`, { method: 'DELETE', headers: admin })).status).toBe(200);
  expect(await settled(a, p.id, p.secretKey)).toBe(401);
});
