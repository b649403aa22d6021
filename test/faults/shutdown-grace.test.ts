import { startCluster, type Cluster, type RunningProcess } from '@plinth/testing/cluster';
import { projectCall, type ProjectAccess } from '../e2e/support/api';
import { waitFor } from '@plinth/shared/testing/wait-for';

/**
 * Fault: a service process gets SIGTERM (a rolling update, a scale-down) while traffic flows.
 * It must go unready first (`/readyz` 503) and keep answering for PLINTH_SHUTDOWN_GRACE_MS, so a
 * load balancer stops routing to it before its listener closes; then drain and exit 0.
 */
describe('SIGTERM: unready first, serve through the grace period, then exit', () => {
  let cluster: Cluster;
  let p: ProjectAccess;
  let records: RunningProcess;

  beforeAll(async () => {
    cluster = await startCluster({ serviceEnv: { records: { PLINTH_SHUTDOWN_GRACE_MS: '4000' } } });
    p = { url: cluster.url, ...(await cluster.createProject('faults-shutdown')) };
    const created = await projectCall(p, 'POST', '/collections', { key: p.secretKey, body: { name: 'notes', fields: { body: { type: 'text' } } } });
    expect(created.status).toBe(201);
    records = cluster.processes.find((x) => x.name === 'records-0')!;
  }, 60_000);

  afterAll(() => cluster?.stop());

  it('answers /readyz 503 at once, still serves API requests and /healthz, then exits 0', async () => {
    expect((await fetch(`${records.url}/readyz`)).status).toBe(200);
    const exited = new Promise<number | null>((resolve) => records.child.once('exit', (code) => resolve(code)));
    records.child.kill('SIGTERM');

    const unready = await waitFor('records to report unready', async () => {
      const res = await fetch(`${records.url}/readyz`);
      return res.status === 503 ? res : undefined;
    });
    expect(await unready.json()).toMatchObject({ error: 'unavailable' });

    // Still serving during the grace period: through the gateway and directly.
    const write = await projectCall(p, 'POST', '/collections/notes/records', { key: p.secretKey, body: { data: { body: 'late' } } });
    expect(write.status).toBe(201);
    const list = await projectCall<{ records: { body: string }[] }>(p, 'GET', '/collections/notes/records', { key: p.secretKey });
    expect(list.status).toBe(200);
    expect(list.body.records.map((r) => r.body)).toContain('late');
    expect((await fetch(`${records.url}/healthz`)).status).toBe(200);

    expect(await exited).toBe(0);
    await expect(fetch(`${records.url}/healthz`)).rejects.toThrow();
  });
});
