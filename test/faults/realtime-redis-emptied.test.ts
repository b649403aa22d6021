import { startCluster, type Cluster } from '../../gateway/src/testing/cluster';
import { projectCall, type ProjectAccess } from '../e2e/support/api';
import { RtClient, type Msg } from '../../services/realtime/test/support/rt-client';
import { OwnRedis } from './support/own-redis';

/**
 * Fault: the cluster's Redis (the realtime event log) restarts EMPTY while ~200 writes a second
 * are made and 3 clients are subscribed. Every client ends holding exactly the records as they
 * are: from the events it was sent (each change once), or — having been told resync_required —
 * from the fresh snapshot and the events after it. None is left silently missing a change.
 */
describe('realtime across a Redis restarted empty', () => {
  let redis: OwnRedis;
  let cluster: Cluster;
  let p: ProjectAccess;

  beforeAll(async () => {
    redis = await OwnRedis.start();
    cluster = await startCluster({ replicas: { realtime: 1 }, env: { REDIS_URL: redis.url } });
    p = { url: cluster.url, ...(await cluster.createProject('rtempty')) };
    const res = await projectCall(p, 'POST', '/collections', { key: p.secretKey, body: { name: 'feed', fields: { n: { type: 'integer' } }, rules: { read: 'true' } } });
    expect(res.status).toBe(201);
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
    await redis?.kill();
  });

  /** What a client holds: the last snapshot after the last resync (or none), then the events. */
  function held(c: RtClient, id: string): Map<string, number> {
    const mine = c.messages.filter((m) => m.id === id);
    const lastResync = mine.map((m) => m.type).lastIndexOf('resync_required');
    const state = new Map<string, number>();
    for (const m of lastResync >= 0 ? mine.slice(lastResync) : mine) {
      if (m.type === 'snapshot') for (const r of (m as Msg & { records: { id: string; n: number }[] }).records) state.set(r.id, r.n);
      if (m.type === 'events') {
        for (const e of (m as Msg & { events: { kind: string; record: { id: string; n?: number } }[] }).events) {
          if (e.kind === 'delete' || e.kind === 'leave') state.delete(e.record.id);
          else state.set(e.record.id, e.record.n!);
        }
      }
    }
    return state;
  }

  it('3 subscribers, Redis restarted empty under writes: each ends with every record as it is, or was told to resync', async () => {
    const clients = await Promise.all([0, 1, 2].map(() => RtClient.connect(cluster.url, p.id, { queryKey: p.publicKey })));
    for (const c of clients) expect(await c.subscribe('f', { collection: 'feed', snapshot: true })).toMatchObject({ type: 'subscribed' });
    let stop = false;
    let n = 0;
    const acknowledged: string[] = [];
    const writer = (async () => {
      while (!stop) {
        const i = n++;
        const res = await projectCall<{ record: { id: string } }>(p, 'POST', '/collections/feed/records', { key: p.secretKey, body: { data: { n: i } } }).catch(() => null);
        if (res?.status === 201) acknowledged.push(res.body.record.id);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    await clients[0]!.waitForEvents('f', 30, 20_000);
    await redis.restartEmpty();
    // Writes go on after the restart; then stop and let the last events arrive.
    const after = acknowledged.length;
    for (let i = 0; acknowledged.length < after + 100 && i < 1000; i++) await new Promise((r) => setTimeout(r, 20));
    stop = true;
    await writer;
    const final = await projectCall<{ records: { id: string; n: number }[] }>(p, 'GET', '/collections/feed/records?limit=1000', { key: p.secretKey });
    const expected = new Map(final.body.records.map((r) => [r.id, r.n]));
    expect(expected.size).toBeGreaterThanOrEqual(130);
    // Every client converges on the stored records (the last write's event may still be in flight).
    for (const c of clients) {
      for (let i = 0; i < 250 && JSON.stringify([...held(c, 'f')].sort()) !== JSON.stringify([...expected].sort()); i++) {
        await new Promise((r) => setTimeout(r, 40));
      }
      const state = held(c, 'f');
      const missing = [...expected.keys()].filter((id) => !state.has(id));
      expect({ missing, extra: state.size - expected.size + missing.length }).toEqual({ missing: [], extra: 0 });
      // The restart lost events: the client was told (resync_required), not left with a gap.
      expect(c.messages.some((m) => m.type === 'resync_required')).toBe(true);
      // Nothing delivered twice after the last resync.
      const ids = c.messages
        .slice(c.messages.map((m) => m.type).lastIndexOf('resync_required'))
        .filter((m) => m.type === 'events' && m.id === 'f')
        .flatMap((m) => (m as Msg & { events: { kind: string; record: { id: string } }[] }).events.filter((e) => e.kind === 'create').map((e) => e.record.id));
      expect(new Set(ids).size).toBe(ids.length);
      c.close();
    }
  }, 120_000);
});
