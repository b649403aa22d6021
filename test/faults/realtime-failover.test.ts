import { WebSocket } from 'ws';
import { internalHeaders } from '@plinth/shared';
import { startCluster, type Cluster, type RunningProcess } from '@plinth/testing/cluster';
import { redisRun } from '../e2e/support/redis-run';
import { projectCall, type ProjectAccess } from '../e2e/support/api';
import { RtClient, refusal, wsUrl } from '../../services/realtime/test/support/rt-client';

/**
 * Fault: one of two realtime replicas dies (SIGKILL). The gateway retries each WebSocket upgrade
 * its chosen replica refused on the other one, so every new connection opens and receives what
 * is committed. And the gateway → realtime upgrade credential is accepted once across replicas
 * (the shared nonce store in Redis): a captured upgrade request replayed against another replica
 * is refused.
 */
describe('realtime replicas fail over', () => {
  let cluster: Cluster;
  let p: ProjectAccess;
  // A mail queue of its own in the shared Redis, obliterated at the end.
  const run = redisRun('rt-failover');

  beforeAll(async () => {
    cluster = await startCluster({
      replicas: { realtime: 2 },
      env: { REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', PLINTH_MAIL_QUEUE: run.queueName },
    });
    p = { url: cluster.url, ...(await cluster.createProject(run.projectId('rtf'))) };
    const res = await projectCall(p, 'POST', '/collections', {
      key: p.secretKey,
      body: { name: 'board', fields: { text: { type: 'text' } }, rules: { read: 'true' } },
    });
    expect(res.status).toBe(201);
  }, 90_000);

  afterAll(async () => {
    await cluster?.stop();
    await run.cleanUp();
  });

  const replica = (i: number): RunningProcess => cluster.processes.find((x) => x.name === `realtime-${i}`)!;

  it('a captured upgrade request replayed against the other replica is refused (401); the original was accepted', async () => {
    const path = `/v1/projects/${p.id}/realtime`;
    // What the gateway sends a replica: the identity headers signed with the internal secret.
    const captured = internalHeaders(
      cluster.internalSecret,
      { project: p.id, keyKind: 'public', requestId: 'captured-upgrade', clientAddress: '127.0.0.1' },
      { method: 'GET', path },
    );
    const original = await RtClient.wrap(new WebSocket(`${replica(0).url.replace(/^http/, 'ws')}${path}`, { headers: captured }));
    original.close();
    const replayed = await refusal(`${replica(1).url.replace(/^http/, 'ws')}${path}`, captured);
    expect(replayed).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
  });

  it('after SIGKILL of one replica, 10 new connections through the gateway all open and receive a committed write', async () => {
    const victim = replica(0);
    const exited = new Promise<void>((r) => victim.child.once('exit', () => r()));
    victim.child.kill('SIGKILL');
    await exited;
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, async () => {
        const c = await RtClient.connect(cluster.url, p.id, { queryKey: p.publicKey });
        expect(await c.subscribe('b', { collection: 'board' })).toMatchObject({ type: 'subscribed' });
        return c;
      }),
    );
    const failed = outcomes.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason));
    const clients = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    try {
      expect(failed).toEqual([]);
      const created = await projectCall(p, 'POST', '/collections/board/records', { key: p.secretKey, body: { data: { text: 'after the kill' } } });
      expect(created.status).toBe(201);
      for (const c of clients) {
        const [event] = await c.waitForEvents('b', 1);
        expect(event).toMatchObject({ kind: 'create', record: { text: 'after the kill' } });
      }
    } finally {
      for (const c of clients) c.close();
    }
  });

  it('an upgrade with no replica left answers 503 unavailable in the envelope', async () => {
    const last = replica(1);
    const exited = new Promise<void>((r) => last.child.once('exit', () => r()));
    last.child.kill('SIGKILL');
    await exited;
    expect(await refusal(wsUrl(cluster.url, p.id, { queryKey: p.publicKey }))).toMatchObject({ status: 503, body: { error: 'unavailable' } });
  });
});
