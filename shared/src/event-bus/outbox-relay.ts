import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { OutboxRow, OutboxSource } from './outbox-source';
import { RedisEventKeys } from './redis-event-keys';

/**
 * The outbox relay (docs/architecture.md "The outbox"): copies the rows of the records store's
 * outbox to the Redis streams the realtime servers read, in position order, each entry carrying
 * the store-assigned position (its stream id) and the outbox's epoch. The outbox is the truth;
 * Redis is transport.
 *
 * - **One active relay per deployment**: every records process runs one, and the one holding
 *   the lease (`<prefix>relay:lease`, SET NX PX, renewed every quarter of its life) copies. A
 *   killed holder's lease lapses and another process takes over.
 * - **Fenced and never skipping**: one Lua script appends a batch only while the caller still
 *   holds the lease AND `<prefix>relayed` (the last position copied) is what the caller read
 *   before it chose the rows, and sets `relayed` with the entries. So Redis always holds a
 *   gap-free copy of the outbox up to `relayed`, whoever wrote it, and a restarted or new relay
 *   goes on from `relayed` as Redis has it.
 * - **Redis lost data**: a Redis restarted empty has no `relayed`: the relay copies the outbox
 *   again from its oldest retained row (positions and epoch are the store's, so they stay valid);
 *   a replica promoted while it lagged has an older `relayed`: the relay copies again from there.
 *   Each entry names the entry before it in its shard (`sp`), so a reader sees any hole.
 */

/** Outbox rows copied per script at most (and about MAX_BATCH_BYTES of events). */
const MAX_BATCH_ROWS = 500;
const MAX_BATCH_BYTES = 1 << 20;

const FENCED = 'PLINTH_FENCED';
const MOVED = 'PLINTH_MOVED';
const BEHIND = 'PLINTH_BEHIND';

/**
 * KEYS: lease, relayed, epoch, floor, replay, purged, stream 0..S-1, counter 0..S-1.
 * ARGV: token, expected relayed ('' none), epoch, floor ('' keep), replay ('' keep), base (relayed
 * when no entry), shards, maxlen, n, then n × (shard, seq, project, t, json, collection, cp).
 */
const RELAY = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return redis.error_reply('${FENCED}') end
local relayed = redis.call('GET', KEYS[2]) or ''
if relayed ~= ARGV[2] then return redis.error_reply('${MOVED}') end
local epoch = redis.call('GET', KEYS[3])
if epoch and epoch ~= ARGV[3] then return redis.error_reply('${MOVED}') end
local shards = tonumber(ARGV[7])
local n = tonumber(ARGV[9])
for k = 0, n - 1 do
  local i = 10 + k * 7
  local top = tonumber(redis.call('GET', KEYS[6 + shards + tonumber(ARGV[i]) + 1]) or '0')
  if tonumber(ARGV[i + 1]) <= top then return redis.error_reply('${BEHIND}') end
end
redis.call('SET', KEYS[3], ARGV[3])
if ARGV[4] ~= '' then redis.call('SET', KEYS[4], ARGV[4]) end
if ARGV[5] ~= '' then redis.call('SET', KEYS[5], ARGV[5]) end
local last = ARGV[6]
for k = 0, n - 1 do
  local i = 10 + k * 7
  local shard = tonumber(ARGV[i])
  local stream = KEYS[6 + shard + 1]
  local counter = KEYS[6 + shards + shard + 1]
  local sp = redis.call('GET', counter) or '0'
  redis.call('XADD', stream, 'MAXLEN', '~', ARGV[8], ARGV[i + 1] .. '-0', 'p', ARGV[i + 2], 't', ARGV[i + 3], 'e', ARGV[i + 4], 'c', ARGV[i + 5], 'cp', ARGV[i + 6], 'sp', sp)
  redis.call('SET', counter, ARGV[i + 1])
  if ARGV[i + 5] == '' then redis.call('HSET', KEYS[6], ARGV[i + 2], ARGV[i + 1]) end
  last = ARGV[i + 1]
end
redis.call('SET', KEYS[2], last)
return last
`;

/** KEYS: lease, then every key to delete. ARGV: token. */
const RESET = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return redis.error_reply('${FENCED}') end
for i = 2, #KEYS do redis.call('DEL', KEYS[i]) end
return 1
`;

const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;

export interface OutboxRelayOptions {
  /** A connection of the relay's own (its scripts may be large). */
  redis: Redis;
  source: OutboxSource;
  prefix: string;
  shards: number;
  /** Entries kept per shard stream (approximate MAXLEN). */
  maxPerShard: number;
  /** Life of the lease (ms); a dead holder is replaced within it. Default 2000. */
  leaseMs?: number;
  /** How often the outbox is looked at for rows other processes wrote (ms). Default 20. */
  pollMs?: number;
  /** Told about failures (at most one every 5 s). */
  onError?: (err: unknown) => void;
}

type Run = (...args: (string | number)[]) => Promise<string>;

export class OutboxRelay {
  private readonly keys: RedisEventKeys;
  private readonly token = randomBytes(12).toString('hex');
  private readonly leaseMs: number;
  private holding = false;
  private leaseCheckedAt = 0;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private lastError = 0;
  /**
   * What Redis held after this relay's last copy (the last position copied, the epoch), so a
   * copy needs no read first; null: read Redis first. A copy made on a stale view is refused by
   * the script's compare-and-set (then the view is dropped), and the lease check compares it
   * with Redis every quarter of the lease's life.
   */
  private known: { relayed: number; epoch: string } | null = null;

  constructor(private readonly opts: OutboxRelayOptions) {
    this.keys = new RedisEventKeys(opts.prefix, opts.shards);
    this.leaseMs = opts.leaseMs ?? 2000;
    opts.redis.defineCommand('plinthRelay', { lua: RELAY, numberOfKeys: 6 + 2 * opts.shards });
    opts.redis.defineCommand('plinthRelayReset', { lua: RESET });
  }

  /** Starts polling the outbox (and competing for the lease). */
  start(): void {
    this.timer = setInterval(() => this.poke(), this.opts.pollMs ?? 20);
    this.timer.unref?.();
    this.poke();
  }

  /** Whether this process holds the lease (as of its last check). */
  get active(): boolean {
    return this.holding;
  }

  /** A write of this process committed rows: copy them now rather than at the next poll. */
  poke(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.cycle().finally(() => {
      this.running = null;
      if (this.again) {
        this.again = false;
        this.poke();
      }
    });
  }

  /** Stops, waits for a copy in progress, and gives the lease up. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
    if (this.holding) {
      await this.opts.redis.eval("if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0", 1, this.keys.lease(), this.token).catch(() => undefined);
      this.holding = false;
    }
  }

  private async cycle(): Promise<void> {
    try {
      // Holder or not, the lease is looked at every quarter of its life (not at every poll).
      if (Date.now() - this.leaseCheckedAt > this.leaseMs / 4) await this.checkLease();
      if (!this.holding) return;
      // Until caught up (each round is one batch).
      for (let round = 0; round < 100 && !this.stopped; round++) if (!(await this.copyBatch())) break;
    } catch (err) {
      const message = err instanceof Error ? err.message : '';
      this.known = null;
      if (message.startsWith(FENCED)) this.holding = false;
      else if (!message.startsWith(MOVED)) {
        // Redis away: whoever holds the lease when it is back goes on from what it holds.
        this.holding = false;
        if (Date.now() - this.lastError > 5000) {
          this.lastError = Date.now();
          this.opts.onError?.(err);
        }
      }
    }
  }

  private async checkLease(): Promise<void> {
    const r = this.opts.redis;
    const took = await r.set(this.keys.lease(), this.token, 'PX', this.leaseMs, 'NX');
    this.holding = took === 'OK' || Number(await r.eval(RENEW, 1, this.keys.lease(), this.token, this.leaseMs)) === 1;
    this.leaseCheckedAt = Date.now();
    // Redis lost what this relay copied (restarted empty, failed over), or the outbox is another one.
    if (this.known && (Number((await r.get(this.keys.relayed())) ?? NaN) !== this.known.relayed || (await this.opts.source.epoch()) !== this.known.epoch)) {
      this.known = null;
    }
  }

  /** Copies one batch; false when there was nothing to copy. */
  private async copyBatch(): Promise<boolean> {
    const { redis, source } = this.opts;
    let relayed: number | null;
    let epoch: string;
    if (this.known) {
      ({ relayed, epoch } = this.known);
    } else {
      const replies = await redis.multi().get(this.keys.relayed()).get(this.keys.epoch()).exec();
      if (!replies) throw new Error('relay state read aborted');
      for (const [err] of replies) if (err) throw err;
      relayed = replies[0]![1] === null ? null : Number(replies[0]![1]);
      const redisEpoch = replies[1]![1] as string | null;
      epoch = await source.epoch();
      if ((redisEpoch !== null && redisEpoch !== epoch) || (redisEpoch === null && relayed !== null)) {
        // Redis holds another history (another outbox, or events written before the relay): start anew.
        await this.reset();
        relayed = null;
      }
    }
    let floor = '';
    let replay = '';
    let base: number;
    if (relayed === null) {
      // An empty Redis: fill it from the oldest row the outbox keeps.
      const [oldest, head] = await Promise.all([source.oldest(), source.head()]);
      base = oldest ? (oldest.prev > 0 ? Math.min(oldest.prev, oldest.seq - 1) : oldest.seq - 1) : head;
      floor = String(base);
      replay = String(head);
    } else {
      base = relayed;
    }
    const rows = await source.rowsAfter(base, MAX_BATCH_ROWS);
    const first = rows[0];
    // Rows after what Redis holds were trimmed from the outbox before they were copied: readers
    // positioned below the first one left cannot replay and resync (floor).
    if (relayed !== null && first && first.prev > relayed) floor = String(first.prev);
    if (relayed !== null && rows.length === 0) return false;
    const batch = takeBatch(rows);
    const args: (string | number)[] = [this.keys.lease(), this.keys.relayed(), this.keys.epoch(), this.keys.floor(), this.keys.replay(), this.keys.purged()];
    for (let i = 0; i < this.opts.shards; i++) args.push(this.keys.stream(i));
    for (let i = 0; i < this.opts.shards; i++) args.push(this.keys.counter(i));
    args.push(this.token, relayed === null ? '' : String(relayed), epoch, floor, replay, String(base), this.opts.shards, this.opts.maxPerShard, batch.length);
    for (const row of batch) {
      args.push(this.keys.shardOf(row.project), row.seq, row.project, row.committed_at, row.payload, row.collection, row.cprev);
    }
    const run = (redis as unknown as { plinthRelay: Run }).plinthRelay;
    try {
      this.known = { relayed: Number(await run.apply(redis, args)), epoch };
    } catch (err) {
      this.known = null;
      const message = err instanceof Error ? err.message : '';
      // Redis is not what this relay last saw: read it and go on from there.
      if (message.startsWith(MOVED)) return true;
      // A stream already holds a later position than the outbox: another history, start anew.
      if (message.startsWith(BEHIND)) {
        await this.reset();
        return true;
      }
      throw err;
    }
    return batch.length === MAX_BATCH_ROWS || batch.length < rows.length;
  }

  /** Deletes the log's keys in Redis (fenced by the lease); readers see a new epoch. */
  private async reset(): Promise<void> {
    const keys = this.keys.all().filter((k) => k !== this.keys.lease() && k !== this.keys.purged());
    const run = (this.opts.redis as unknown as { plinthRelayReset: Run }).plinthRelayReset;
    await run.call(this.opts.redis, keys.length + 1, this.keys.lease(), ...keys, this.token);
  }
}

/** The rows of one script: up to MAX_BATCH_ROWS and about MAX_BATCH_BYTES (at least one row). */
function takeBatch(rows: OutboxRow[]): OutboxRow[] {
  let bytes = 0;
  let n = 0;
  while (n < rows.length && (n === 0 || bytes < MAX_BATCH_BYTES)) bytes += rows[n++]!.payload.length;
  return rows.slice(0, n);
}
