import type { Cluster } from '@plinth/testing/cluster';
import type { ProjectAccess } from '../e2e/support/api';
import { OwnRedis } from './support/own-redis';
import { expectConverged, ResumingSubscriber, startFeedCluster, startWriters, until } from './support/realtime-convergence';

/**
 * Fault: the cluster's Redis (the transport of change events) restarts EMPTY while ~200 writes a
 * second are made and 3 subscribers are connected, each of which also drops its connection and
 * resumes from its position (`resume_from`, `resume_epoch`) around the restart. The records
 * store's outbox is the truth (docs/realtime.md "Delivery guarantee"): every subscriber ends
 * holding exactly the stored records, each change received once — or, told `resync_required`,
 * from the snapshot that followed. None is left silently missing a change.
 */
describe('realtime across a Redis restarted empty (cluster, outbox relay)', () => {
  let redis: OwnRedis;
  let cluster: Cluster;
  let p: ProjectAccess;

  beforeAll(async () => {
    redis = await OwnRedis.start();
    ({ cluster, p } = await startFeedCluster({ replicas: { realtime: 1 }, env: { REDIS_URL: redis.url } }, 'rtempty'));
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
    await redis?.kill();
  });

  it('3 resuming subscribers, Redis restarted empty under writes: each holds every stored record, 0 silently missing', async () => {
    const subs = [0, 1, 2].map(() => new ResumingSubscriber(p));
    for (const s of subs) await s.connect();
    const writers = startWriters(p);
    await until(() => writers.acknowledged.length >= 60);
    // One resumes just before the restart, one right after it, one once writes go on again.
    await subs[0]!.reconnect();
    await redis.restartEmpty();
    await subs[1]!.reconnect();
    const after = writers.acknowledged.length;
    await until(() => writers.acknowledged.length >= after + 150);
    await subs[2]!.reconnect();
    await until(() => writers.acknowledged.length >= after + 400);
    await writers.stop();
    await expectConverged(p, writers.acknowledged, subs);
  }, 90_000);
});
