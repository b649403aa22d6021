import { startCluster, type Cluster, type RunningProcess } from '@plinth/testing/cluster';
import { projectCall, type ProjectAccess } from '../e2e/support/api';

/**
 * Fault: a records replica dies (SIGKILL) or is stopped (SIGTERM) while the gateway sends it a
 * steady load of reads. While one healthy replica remains, no client sees a 503: the gateway
 * retries a failed idempotent request once on another replica, ejects the dead one (refused or
 * reset connections) and stops using a replica whose /readyz fails.
 */
describe('gateway failover across records replicas', () => {
  let cluster: Cluster;
  let p: ProjectAccess;
  let recordId: string;

  beforeAll(async () => {
    // The grace outlasts the gateway's readiness poll (every 2 s), as in production (5 s by
    // default): the gateway has stopped routing to a stopping replica before it drains, which
    // answers 503 to queries still waiting (docs/architecture.md "Process behaviour").
    cluster = await startCluster({ replicas: { records: 3 }, serviceEnv: { records: { PLINTH_SHUTDOWN_GRACE_MS: '4000' } } });
    p = { url: cluster.url, ...(await cluster.createProject('faults-failover')) };
    expect((await projectCall(p, 'POST', '/collections', { key: p.secretKey, body: { name: 'notes', fields: { body: { type: 'text' } } } })).status).toBe(201);
    const rec = await projectCall<{ record: { id: string } }>(p, 'POST', '/collections/notes/records', { key: p.secretKey, body: { data: { body: 'x' } } });
    recordId = rec.body.record.id;
  }, 90_000);

  afterAll(() => cluster?.stop());

  /**
   * Runs `workers` loops of reads and idempotent creates through the gateway; calls `fault`
   * after `before` answers, then keeps going for `after` more. Returns every status seen.
   */
  async function loadAround(fault: () => Promise<void>, before = 60, after = 240, workers = 4): Promise<number[]> {
    const statuses: number[] = [];
    seen.length = 0;
    let faulted = false;
    let faultDone: Promise<void> | null = null;
    const total = before + after;
    const worker = async (w: number) => {
      for (let i = 0; statuses.length < total; i++) {
        // Reads, and (one writer, so the replicas' shared SQLite file sees no write races) every
        // third request of worker 0 a create carrying an Idempotency-Key (safe to repeat).
        const write = w === 0 && i % 3 === 2;
        const path = write || (i + w) % 2 === 0 ? '/collections/notes/records' : `/collections/notes/records/${recordId}`;
        const res = await fetch(`${p.url}/v1/projects/${p.id}${path}`, {
          method: write ? 'POST' : 'GET',
          headers: {
            Authorization: `Bearer ${p.secretKey}`,
            ...(write ? { 'Content-Type': 'application/json', 'Idempotency-Key': `load-${process.pid}-${w}-${i}-${statuses.length}` } : {}),
          },
          body: write ? JSON.stringify({ data: { body: `w${w}-${i}` } }) : undefined,
          signal: AbortSignal.timeout(15_000),
        });
        const text = await res.text();
        statuses.push(res.status);
        if (res.status >= 300) seen.push(`${res.status} ${write ? 'POST' : 'GET'} ${text.slice(0, 160)}`);
        if (!faulted && statuses.length >= before) {
          faulted = true;
          faultDone = fault();
        }
      }
    };
    await Promise.all(Array.from({ length: workers }, (_, w) => worker(w)));
    await faultDone;
    return statuses;
  }

  const replica = (i: number): RunningProcess => cluster.processes.find((x) => x.name === `records-${i}`)!;
  const exitOf = (proc: RunningProcess) => new Promise<void>((r) => (proc.child.exitCode !== null ? r() : proc.child.once('exit', () => r())));

  /** The answers other than 200/201 of the last load, for the failure message. */
  const seen: string[] = [];
  /** Statuses other than 200 (reads) and 201 (creates), counted. */
  const failures = (statuses: number[]) =>
    statuses.filter((s) => s !== 200 && s !== 201).reduce<Record<number, number>>((acc, s) => ({ ...acc, [s]: (acc[s] ?? 0) + 1 }), {});

  it('SIGKILL of one replica under load: every read and idempotent create succeeds', async () => {
    const victim = replica(0);
    const statuses = await loadAround(async () => {
      victim.child.kill('SIGKILL');
      await exitOf(victim);
    });
    expect({ failures: failures(statuses), seen }).toEqual({ failures: {}, seen: [] });
  });

  it('SIGTERM of another replica under load: every read and idempotent create succeeds', async () => {
    const victim = replica(1);
    const statuses = await loadAround(async () => {
      victim.child.kill('SIGTERM');
      await exitOf(victim);
    });
    expect({ failures: failures(statuses), seen }).toEqual({ failures: {}, seen: [] });
  });

  it('with no replica left, reads answer 503 unavailable with the envelope', async () => {
    const last = replica(2);
    last.child.kill('SIGKILL');
    await exitOf(last);
    const res = await projectCall(p, 'GET', '/collections/notes/records', { key: p.secretKey });
    expect(res).toMatchObject({ status: 503, body: { error: 'unavailable' } });
  });
});
