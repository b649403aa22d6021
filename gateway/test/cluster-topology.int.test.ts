import { startCluster, type Cluster } from '@plinth/testing/cluster';

/** The gateway as its own process, proxying to service processes (two records replicas). */
describe('cluster topology: gateway and services as separate processes', () => {
  let c: Cluster;
  beforeAll(async () => {
    c = await startCluster({ replicas: { records: 2 } });
  }, 60_000);
  afterAll(async () => {
    await c?.stop();
  });

  it('runs every process with its own health endpoint', async () => {
    expect(c.processes.map((p) => p.name)).toEqual(['auth-0', 'records-0', 'records-1', 'mailer-0', 'gateway']);
    for (const p of c.processes) {
      expect((await fetch(`${p.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${p.url}/readyz`)).status).toBe(200);
    }
  });

  it('authenticates keys of a project made through the operator API, across replicas', async () => {
    const p = await c.createProject('topo-shop');
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${c.url}/v1/projects/topo-shop/collections`, { headers: { Authorization: `Bearer ${p.publicKey}` } });
      statuses.push(res.status);
      expect(res.headers.get('content-type')).toMatch(/json/);
    }
    expect(statuses).toEqual([200, 200, 200, 200]);
    const wrong = await fetch(`${c.url}/v1/projects/topo-shop/collections`, { headers: { Authorization: `Bearer ${p.publicKey}0` } });
    expect(wrong.status).toBe(401);
  });

  it('refuses requests sent straight to a service without the gateway', async () => {
    const records = c.processes.find((p) => p.name === 'records-0')!;
    const res = await fetch(`${records.url}/v1/projects/topo-shop/collections`, {
      headers: { 'X-Plinth-Project': 'topo-shop', 'X-Plinth-Key-Kind': 'secret' },
    });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: string }).error).toBe('unauthorized');
  });

  it('balances across both records replicas', async () => {
    const p = await c.createProject('topo-balance');
    const replicas = c.processes.filter((x) => x.name.startsWith('records-'));
    const apiRequests = async () =>
      Promise.all(
        replicas.map(async (x) => {
          const text = await (await fetch(`${x.url}/metrics`)).text();
          return [...text.matchAll(/^plinth_http_requests_total\{[^}]*\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
        }),
      );
    const before = await apiRequests();
    for (let i = 0; i < 6; i++) {
      await fetch(`${c.url}/v1/projects/topo-balance/collections`, { headers: { Authorization: `Bearer ${p.secretKey}` } });
    }
    const after = await apiRequests();
    expect(after.map((n, i) => n - before[i]!)).toEqual([3, 3]);
  });
});
