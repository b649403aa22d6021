import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { scanKeys, type Cluster } from '@plinth/testing/cluster';
import type { ProjectAccess } from '../e2e/support/api';
import { OwnRedis } from './support/own-redis';
import { TcpProxy } from './support/tcp-proxy';
import { expectConverged, ResumingSubscriber, startFeedCluster, startWriters, until } from './support/realtime-convergence';

/**
 * Fault: the cluster's Redis fails over to a replica that lags — it stopped receiving from its
 * primary while ~200 writes a second went on — while 3 subscribers are connected (each also
 * drops its connection and resumes around the failover). The replica lacks the newest entries
 * (and the relay's record of what it copied): the relay copies again from what the replica
 * holds, and every subscriber ends holding exactly the stored records, each change once — or,
 * told `resync_required`, from the snapshot that followed. None silently misses a change.
 *
 * The replica replicates through a proxy the test holds (the lag); the services reach Redis
 * through another proxy the test points at the promoted replica (one address, as behind a
 * Sentinel-managed service).
 */
describe('realtime across a failover to a lagging Redis replica (cluster, outbox relay)', () => {
  let primary: OwnRedis;
  let replica: OwnRedis;
  let replication: TcpProxy;
  let front: TcpProxy;
  let cluster: Cluster;
  let p: ProjectAccess;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-rt-failover-'));

  beforeAll(async () => {
    primary = await OwnRedis.start(['--dir', dir]);
    replica = await OwnRedis.start(['--dir', dir]);
    replication = await TcpProxy.start(primary.port);
    front = await TcpProxy.start(primary.port);
    const r = new Redis(replica.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
    await r.replicaof('127.0.0.1', replication.port);
    r.disconnect();
    ({ cluster, p } = await startFeedCluster({ replicas: { realtime: 1 }, env: { REDIS_URL: front.url } }, 'rtfailover'));
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
    await front?.close();
    await replication?.close();
    await replica?.kill();
    await primary?.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('3 resuming subscribers, failover to a replica that lagged: each holds every stored record, 0 silently missing', async () => {
    const subs = [0, 1, 2].map(() => new ResumingSubscriber(p));
    for (const s of subs) await s.connect();
    const writers = startWriters(p);
    await until(() => writers.acknowledged.length >= 60);
    // The replica lags from here on; the primary takes (and the subscribers receive) more writes.
    replication.hold();
    const lagFrom = writers.acknowledged.length;
    await until(() => writers.acknowledged.length >= lagFrom + 100);
    await subs[0]!.reconnect();
    const lagging = new Redis(replica.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
    // The replica really lags: the last position copied to it is behind the primary's.
    const relayedOn = async (r: Redis) => Number(await r.get((await scanKeys(r, 'test:events:*relayed'))[0]!));
    const ahead = new Redis(primary.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
    expect(await relayedOn(lagging)).toBeLessThan(await relayedOn(ahead));
    ahead.disconnect();
    await lagging.replicaof('NO', 'ONE');
    lagging.disconnect();
    await primary.kill();
    front.retarget(replica.port);
    await subs[1]!.reconnect();
    const after = writers.acknowledged.length;
    await until(() => writers.acknowledged.length >= after + 150);
    await subs[2]!.reconnect();
    await until(() => writers.acknowledged.length >= after + 300);
    await writers.stop();
    await expectConverged(p, writers.acknowledged, subs);
  }, 90_000);
});
