/**
 * The outbox relay (docs/architecture.md "The outbox") against the shared Redis, under a prefix
 * of its own: it copies the outbox in position order with the store's positions and epoch; one
 * relay at a time holds the lease and another takes over when it stops; a relay whose lease was
 * taken is fenced; a Redis that lost the copy is filled again under the same positions, and a
 * tail that had read part of it goes on without a duplicate or a reset.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { appendEvent, asProjectId, openSqlite, OutboxRelay, RedisEventBus, SqliteOutboxSource, type ChangeEvent, type SqliteDatabase } from '@plinth/shared';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const project = asProjectId('relay');
const SHARDS = 2;

async function until(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('outbox relay', () => {
  const prefix = `test:relay:${randomBytes(6).toString('hex')}:`;
  const conns: Redis[] = [];
  let db: SqliteDatabase;
  let bus: RedisEventBus;
  const redis = () => {
    const r = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
    conns.push(r);
    return r;
  };
  const relay = (leaseMs = 300) => new OutboxRelay({ redis: redis(), source: new SqliteOutboxSource(db), prefix, shards: SHARDS, maxPerShard: 10_000, leaseMs, pollMs: 10 });
  const write = (n: number) =>
    db.transaction(() => {
      for (let i = 0; i < n; i++) appendEvent(db, { project, collection: `c${i % 3}`, kind: 'create', record: { id: `rec_${i}`, version: 1, created_at: 't', updated_at: 't' }, committed_at: Date.now() });
    })();
  const head = () => Number(db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'events'").pluck().get() ?? 0);
  const relayed = async () => Number((await conns[0]!.get(`${prefix}relayed`)) ?? 0);

  beforeAll(() => {
    db = openSqlite(':memory:');
    new SqliteOutboxSource(db);
    bus = new RedisEventBus({ redis: redis(), prefix, shards: SHARDS, blockMs: 100 });
  });

  afterAll(async () => {
    await bus.close();
    await conns[0]!.del(...bus.keys());
    for (const r of conns) r.disconnect();
    db.close();
  });

  it('copies in order with the store positions and epoch; one holder at a time; takeover; fencing; refill after a loss', async () => {
    const seen: ChangeEvent[] = [];
    const resets: string[] = [];
    const stopTail = await bus.tail((events) => seen.push(...events), undefined, (r) => resets.push(r));
    const [a, b] = [relay(), relay()];
    a.start();
    write(50);
    await until(async () => (await relayed()) === head());
    b.start();
    await new Promise((r) => setTimeout(r, 100));
    expect([a.active, b.active].filter(Boolean)).toHaveLength(1);
    const holder = a.active ? a : b;
    const other = holder === a ? b : a;
    expect(await bus.epoch()).toBe(db.prepare('SELECT epoch FROM event_log').pluck().get());
    // Every collection's history reads back whole, with the store's positions.
    const page = await bus.read(project, 'c1', 0);
    expect(page.trimmed).toBe(false);
    expect(page.events.map((e) => e.seq)).toEqual(db.prepare("SELECT seq FROM events WHERE collection = 'c1' ORDER BY seq").pluck().all());

    // The holder stops: the other takes the lease over and copies what follows.
    await holder.stop();
    write(40);
    await until(async () => (await relayed()) === head());
    expect(other.active).toBe(true);

    // A relay whose lease was taken from it (it stalled past its life) copies nothing more.
    const stale = relay(60_000);
    await conns[0]!.set(`${prefix}relay:lease`, 'someone-else', 'PX', 60_000);
    await until(() => !other.active);
    stale.start();
    write(5);
    await new Promise((r) => setTimeout(r, 200));
    expect(await relayed()).toBe(head() - 5);
    await conns[0]!.del(`${prefix}relay:lease`);
    await until(async () => (await relayed()) === head());

    // Redis loses the copy (restarted empty): filled again under the same positions; the tail
    // goes on after what it delivered — nothing twice, nothing missing, no reset.
    await until(() => seen.length === head());
    const keys = bus.keys().filter((k) => !k.endsWith('relay:lease'));
    await conns[0]!.del(...keys);
    write(30);
    await until(async () => (await relayed()) === head());
    await until(() => seen.length === head());
    expect(seen.map((e) => e.seq)).toEqual(Array.from({ length: head() }, (_, i) => i + 1));
    expect(resets).toEqual([]);
    expect((await bus.read(project, 'c2', 0)).trimmed).toBe(false);
    stopTail();
    for (const r of [a, b, stale]) await r.stop();
  }, 30_000);
});
