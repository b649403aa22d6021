import { startCluster, type Cluster } from '@plinth/testing/cluster';
import { projectCall, type ProjectAccess } from '../e2e/support/api';

/**
 * Fault, cluster topology: records replicas are SIGKILLed while 100-operation batches go through
 * the gateway (docs/records.md "Batch writes"), then started again on the same data. Every batch
 * is found either whole (100 records) or not at all, and every batch answered 200 is whole: a
 * batch is one transaction, so a process killed in the middle of one leaves nothing of it.
 */
const OPS = 100;
const KILLS = 6;

describe('batches under SIGKILL of a records process (cluster)', () => {
  let cluster: Cluster;
  let p: ProjectAccess;

  beforeAll(async () => {
    cluster = await startCluster({ replicas: { records: 2 } });
    p = { url: cluster.url, ...(await cluster.createProject('faults-batch-kill')) };
    const made = await projectCall(p, 'POST', '/collections', { key: p.secretKey, body: { name: 'parts', fields: { batch: { type: 'integer', indexed: true }, n: { type: 'integer' } } } });
    expect(made.status).toBe(201);
  }, 90_000);

  afterAll(() => cluster?.stop());

  it('every batch is all or nothing after the kills and restarts; every acknowledged one is whole', async () => {
    const answers = new Map<number, number>();
    let next = 0;
    const send = async (batch: number): Promise<void> => {
      const operations = Array.from({ length: OPS }, (_, n) => ({ op: 'create', collection: 'parts', data: { batch, n } }));
      try {
        const res = await fetch(`${p.url}/v1/projects/${p.id}/batch`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${p.secretKey}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ operations }),
          signal: AbortSignal.timeout(15_000),
        });
        await res.arrayBuffer();
        answers.set(batch, res.status);
      } catch {
        answers.set(batch, 0);
      }
    };
    for (let k = 0; k < KILLS; k++) {
      // Two writers, so a batch is in flight on each replica most of the time; one replica is
      // SIGKILLed wherever it is in its work, the writers stop, and it starts again on the same files.
      let writing = true;
      const writer = async (): Promise<void> => {
        while (writing) await send(next++);
      };
      const writers = [writer(), writer()];
      await new Promise((r) => setTimeout(r, 100 + Math.random() * 150));
      cluster.processes.find((x) => x.name === `records-${k % 2}`)!.child.kill('SIGKILL');
      writing = false;
      await Promise.all(writers);
      await cluster.restart(`records-${k % 2}`);
    }

    const counts = new Map<number, number>();
    for (const batch of answers.keys()) {
      const res = await projectCall<{ count: number }>(p, 'GET', `/collections/parts/aggregate?count=true&where=${encodeURIComponent(JSON.stringify([['batch', '==', batch]]))}`, { key: p.secretKey });
      expect(res.status).toBe(200);
      counts.set(batch, res.body.count);
    }
    const partial = [...counts].filter(([, n]) => n !== 0 && n !== OPS);
    const lostAcknowledged = [...answers].filter(([b, status]) => status === 200 && counts.get(b) !== OPS);
    expect({ partial, lostAcknowledged }).toEqual({ partial: [], lostAcknowledged: [] });
    // The kills did land on batches in flight (else this test showed nothing), and work went on.
    const refused = [...answers.values()].filter((s) => s !== 200).length;
    expect(refused).toBeGreaterThan(0);
    expect([...answers.values()].filter((s) => s === 200).length).toBeGreaterThan(KILLS);
  }, 120_000);
});
