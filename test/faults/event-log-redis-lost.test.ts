/**
 * Positions that cannot lie, in cluster mode (docs/realtime.md "Positions and epochs"): the Redis
 * event log restarted EMPTY, or failed over to a replica that lagged, while events are appended
 * (~200/s). The tail (what a realtime server reads live) reports the loss, and a reader holding
 * a position from before it is told its epoch is gone (so realtime answers resync_required),
 * never handed events of another history under the same seqs.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { asProjectId, RedisEventBus, type ChangeEventInput } from '@plinth/shared';
import { OwnRedis } from './support/own-redis';

const project = asProjectId('lostlog');
const event = (n: number): ChangeEventInput => ({
  project,
  collection: 'c',
  kind: 'create',
  record: { id: `rec_${n}`, version: 1, created_at: 't', updated_at: 't', n },
  committed_at: Date.now(),
});

/** Appends about 200 events a second until stopped; resolves with how many were appended. */
function appendLoop(bus: RedisEventBus): { stop: () => Promise<number> } {
  let stopped = false;
  let n = 0;
  const loop = (async () => {
    while (!stopped) {
      await bus.publish(event(n++)).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      return n;
    },
  };
}

async function until(check: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

it('Redis restarted empty under writes: the tail resets (new epoch), an old position is of another epoch', async () => {
  const redis = await OwnRedis.start();
  const conn = new Redis(redis.url, { maxRetriesPerRequest: 2 });
  const bus = new RedisEventBus({ redis: conn, shards: 2, blockMs: 100 });
  const resets: string[] = [];
  const seen: number[] = [];
  const stopTail = await bus.tail((events) => seen.push(...events.map((e) => e.seq)), undefined, (r) => resets.push(r));
  try {
    const writes = appendLoop(bus);
    await until(() => seen.length >= 50);
    const before = await bus.epoch();
    const position = seen[seen.length - 1]!;
    await redis.restartEmpty();
    await until(() => resets.length > 0);
    await writes.stop();
    expect(resets).toContain('epoch');
    const after = await bus.epoch();
    expect(after).not.toBe(before);
    expect(after).not.toBe('');
    // A reader at the old position is answered in the new epoch: realtime resyncs it.
    expect((await bus.read(project, 'c', position)).epoch).toBe(after);
  } finally {
    stopTail();
    await bus.close();
    conn.disconnect();
    await redis.kill();
  }
}, 60_000);

it('failover to a replica that lagged: the tail sees counters go back, makes a new epoch, resets', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-lag-'));
  const primary = await OwnRedis.start(['--dir', dir, '--dbfilename', 'primary.rdb']);
  const replica = await OwnRedis.start(['--dir', dir, '--dbfilename', 'replica.rdb', '--replicaof', '127.0.0.1', String(primary.port)]);
  const conn = new Redis(primary.url, { maxRetriesPerRequest: 2 });
  const bus = new RedisEventBus({ redis: conn, shards: 2, blockMs: 100 });
  const resets: string[] = [];
  const seen: number[] = [];
  const stopTail = await bus.tail((events) => seen.push(...events.map((e) => e.seq)), undefined, (r) => resets.push(r));
  const replicaConn = new Redis(replica.url);
  try {
    const writes = appendLoop(bus);
    await until(() => seen.length >= 50);
    // Partition the replica (it stops receiving), let the primary take more writes, promote the
    // replica and move it to the primary's address (as a failover behind one address does).
    await replicaConn.replicaof('NO', 'ONE');
    const lagging = seen.length;
    await until(() => seen.length >= lagging + 50);
    const before = await bus.epoch();
    const position = seen[seen.length - 1]!;
    await replicaConn.save();
    replicaConn.disconnect();
    await replica.kill();
    await primary.kill();
    // The address now serves the replica's (lagging) data set.
    fs.copyFileSync(path.join(dir, 'replica.rdb'), path.join(dir, 'primary.rdb'));
    await primary.start();
    await until(() => resets.length > 0);
    await writes.stop();
    expect(resets).toContain('epoch');
    const after = await bus.epoch();
    expect(after).not.toBe(before);
    // The old position is not resumed from: it belongs to the old epoch.
    expect((await bus.read(project, 'c', position)).epoch).toBe(after);
  } finally {
    stopTail();
    await bus.close();
    conn.disconnect();
    await primary.kill();
    await replica.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
