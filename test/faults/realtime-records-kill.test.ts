import type { Cluster } from '@plinth/testing/cluster';
import type { ProjectAccess } from '../e2e/support/api';
import { OwnRedis } from './support/own-redis';
import { expectConverged, ResumingSubscriber, startFeedCluster, startWriters, until } from './support/realtime-convergence';

/**
 * Fault: records processes SIGKILLed while writes go on (2 records replicas, 20 kills, each
 * replica restarted after it died). A kill lands between a write's commit and the copy of its
 * event to Redis — in the writer or in the replica that held the relay's lease. The event is in
 * the outbox, committed with the write, so the other replica's relay (it takes the lease over)
 * copies it: every acknowledged write reaches every subscriber, or the subscriber was told
 * `resync_required` and holds the snapshot that followed.
 */
describe('realtime across SIGKILLs of records replicas (cluster, outbox relay)', () => {
  let redis: OwnRedis;
  let cluster: Cluster;
  let p: ProjectAccess;

  beforeAll(async () => {
    redis = await OwnRedis.start();
    ({ cluster, p } = await startFeedCluster({ replicas: { realtime: 1, records: 2 }, env: { REDIS_URL: redis.url } }, 'rtkill'));
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
    await redis?.kill();
  });

  it('20 SIGKILLs of records under writes: every acknowledged write reaches the subscribers', async () => {
    const subs = [0, 1].map(() => new ResumingSubscriber(p));
    for (const s of subs) await s.connect();
    const records = cluster.processes.filter((x) => x.name.startsWith('records-')).map((x) => x.name);
    expect(records).toHaveLength(2);
    const writers = startWriters(p, 3);
    await until(() => writers.acknowledged.length >= 30);
    // Each replica is SIGKILLed and restarted (same files, same port) in the background, and
    // killed again once it is back, with at least one more write acknowledged between kills.
    const restarting: Array<Promise<unknown>> = [Promise.resolve(), Promise.resolve()];
    for (let kill = 0; kill < 20; kill++) {
      const i = kill % 2;
      await restarting[i];
      const before = writers.acknowledged.length;
      await until(() => writers.acknowledged.length > before);
      restarting[i] = cluster.restart(records[i]!);
    }
    await Promise.all(restarting);
    const before = writers.acknowledged.length;
    await until(() => writers.acknowledged.length >= before + 20);
    await writers.stop();
    await expectConverged(p, writers.acknowledged, subs);
  }, 120_000);
});
