import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { ProjectId } from '../types';
import { RedisEventKeys } from './redis-event-keys';
import { runRedisTail } from './redis-event-tail';
import {
  DEFAULT_EVENT_RETENTION,
  type ChangeEvent,
  type ChangeEventInput,
  type EventBus,
  type EventListener,
  type EventPage,
  type EventRetention,
  type ReadLimits,
  type TailReset,
} from './event-bus';

export interface RedisEventBusOptions {
  /** A connection for commands; the bus duplicates it for each blocking tail. */
  redis: Redis;
  /** Key prefix (default `plinth:events:`). Tests use one of their own. */
  prefix?: string;
  /** Number of streams the projects are spread over (hash of the project id). Default 8. */
  shards?: number;
  retention?: EventRetention;
  /** How long one blocking read waits before it is re-issued (ms). */
  blockMs?: number;
  /** close() also disconnects `redis`. */
  ownsConnection?: boolean;
}

/**
 * Key layout (renaming strands the history: change writer and readers together):
 *
 *   <prefix>s:<n>     stream shard n; entry id `<seq>-0`, fields p (project), t (commit ms), e (JSON),
 *                     c (collection; absent in entries written before it was added), cp (the seq
 *                     of the previous entry of the same project and collection, 0 when none)
 *   <prefix>seq:<n>   the last seq assigned in shard n (INCR)
 *   <prefix>heads:<n> hash: "<project>/<collection>" → the seq of its last entry in shard n
 *   <prefix>purged    hash: project → its purge point (the seq of a marker entry, collection '');
 *                     one field per deleted project id, kept for good
 *   <prefix>epoch     the log's epoch: made by the first append to an empty Redis, so a Redis
 *                     that restarted empty (or any other that lost the key) is a new epoch
 *
 * A relayed log (cluster with an outbox: outbox-relay.ts writes it, `publish` is not used) keeps
 * the same streams with the store's positions as entry ids, the outbox's epoch, and also:
 *   entry field sp    the seq of the entry before it in its shard (0: none)
 *   <prefix>seq:<n>   the last position copied into shard n
 *   <prefix>relayed   the last outbox position copied (every shard)
 *   <prefix>floor     positions at or below it were never copied into this Redis
 *   <prefix>replay    the outbox head when the relay began filling an empty Redis
 *   <prefix>relay:lease  the token of the records process that copies
 *
 * A project always maps to the same shard, so its seqs only grow. One Lua script assigns the seq
 * and appends (with an approximate MAXLEN), so seq order is append order even with many writers.
 */
const PUBLISH = `
redis.call('SET', KEYS[4], ARGV[7], 'NX')
local seq = redis.call('INCR', KEYS[2])
local cp = redis.call('HGET', KEYS[3], ARGV[6]) or '0'
redis.call('HSET', KEYS[3], ARGV[6], seq)
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], seq .. '-0', 'p', ARGV[2], 't', ARGV[3], 'e', ARGV[4], 'c', ARGV[5], 'cp', cp)
return seq
`;

/** Appends the project's purge marker (collection ''): its seq is the purge point. */
const MARK_PURGE = `
redis.call('SET', KEYS[4], ARGV[3], 'NX')
local through = redis.call('INCR', KEYS[1])
redis.call('XADD', KEYS[3], through .. '-0', 'p', ARGV[1], 't', ARGV[2], 'e', '{}', 'c', '', 'cp', '0')
redis.call('HSET', KEYS[2], ARGV[1], through)
return through
`;

/** Entries examined per XRANGE while purging or trimming. */
const SCAN_CHUNK = 500;

type StreamEntry = [id: string, fields: string[]];

function seqOf(id: string): number {
  return Number(id.slice(0, id.indexOf('-')));
}

function toEvent(entry: StreamEntry): ChangeEvent {
  const f = entry[1];
  const json = f[f.indexOf('e') + 1]!;
  return { ...(JSON.parse(json) as ChangeEventInput), seq: seqOf(entry[0]) };
}

function field(entry: StreamEntry, name: string): string | undefined {
  const f = entry[1];
  for (let i = 0; i < f.length; i += 2) if (f[i] === name) return f[i + 1];
  return undefined;
}

export class RedisEventBus implements EventBus {
  private readonly k: RedisEventKeys;
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly shards: number;
  private readonly retention: EventRetention;
  private readonly blockMs: number;
  private readonly stops = new Set<() => void>();
  private readonly ownsConnection: boolean;

  constructor(opts: RedisEventBusOptions) {
    this.redis = opts.redis;
    this.prefix = opts.prefix ?? 'plinth:events:';
    this.shards = opts.shards ?? 8;
    this.retention = opts.retention ?? DEFAULT_EVENT_RETENTION;
    this.blockMs = opts.blockMs ?? 2000;
    this.ownsConnection = opts.ownsConnection ?? false;
    this.k = new RedisEventKeys(this.prefix, this.shards);
    this.redis.defineCommand('plinthPublishEvent', { numberOfKeys: 4, lua: PUBLISH });
    this.redis.defineCommand('plinthMarkPurge', { numberOfKeys: 4, lua: MARK_PURGE });
  }

  /** Every key this bus writes (tests delete them). */
  keys(): string[] {
    return this.k.all();
  }

  /** `maxEvents` is the total: each shard keeps its share. */
  private perShard(): number {
    return Math.ceil(this.retention.maxEvents / this.shards);
  }

  private shardOf(project: string): number {
    return this.k.shardOf(project);
  }
  private stream(shard: number): string {
    return `${this.prefix}s:${shard}`;
  }
  private counter(shard: number): string {
    return `${this.prefix}seq:${shard}`;
  }
  private purgedKey(): string {
    return `${this.prefix}purged`;
  }
  private heads(shard: number): string {
    return `${this.prefix}heads:${shard}`;
  }
  private epochKey(): string {
    return `${this.prefix}epoch`;
  }

  /** The epoch; '' while no event was ever appended to this Redis (no position is valid). */
  async epoch(): Promise<string> {
    return (await this.redis.get(this.epochKey())) ?? '';
  }

  async publish(event: ChangeEventInput): Promise<number> {
    const shard = this.shardOf(event.project);
    const run = (this.redis as unknown as { plinthPublishEvent: (...args: (string | number)[]) => Promise<number> }).plinthPublishEvent;
    const seq = await run.call(
      this.redis,
      this.stream(shard),
      this.counter(shard),
      this.heads(shard),
      this.epochKey(),
      this.perShard(),
      event.project,
      event.committed_at,
      JSON.stringify(event),
      event.collection,
      `${event.project}/${event.collection}`,
      randomBytes(8).toString('hex'),
    );
    return Number(seq);
  }

  async head(project: ProjectId): Promise<number> {
    return Number((await this.redis.get(this.counter(this.shardOf(project)))) ?? 0);
  }

  /**
   * A stream shard holds every project of the shard, so a page examines up to `limit` entries of
   * the shard (one XRANGE) and decodes only the project's entries of the collection (the p and
   * c fields are compared first); `next` is the last entry examined.
   */
  async read(project: ProjectId, collection: string, after: number, limits: ReadLimits = {}): Promise<EventPage> {
    const limit = limits.limit ?? 1000;
    const maxBytes = limits.maxBytes ?? Infinity;
    const shard = this.shardOf(project);
    const stream = this.stream(shard);
    // One MULTI: the first retained entry, the page and the counter from the same moment.
    const replies = await this.redis
      .multi()
      .xrange(stream, '-', '+', 'COUNT', 1)
      .xrange(stream, `${after}-1`, '+', 'COUNT', limit)
      .get(this.counter(shard))
      .hget(this.purgedKey(), project)
      .get(this.epochKey())
      .get(this.k.floor())
      .exec();
    if (!replies) throw new Error('event bus read was aborted');
    for (const [err] of replies) if (err) throw err;
    const firstEntries = replies[0]![1] as StreamEntry[];
    const page = replies[1]![1] as StreamEntry[];
    const last = Number((replies[2]![1] as string | null) ?? 0);
    const first = firstEntries[0] ? seqOf(firstEntries[0][0]) : last + 1;
    const purgedThrough = Number((replies[3]![1] as string | null) ?? 0);
    const epoch = (replies[4]![1] as string | null) ?? '';
    const floor = Number((replies[5]![1] as string | null) ?? 0);
    // A relayed entry names the shard's entry before it: one after `after` that is gone was trimmed.
    const firstPrev = firstEntries[0] ? field(firstEntries[0], 'sp') : undefined;
    const trimmedBefore = firstPrev !== undefined ? first > after && Number(firstPrev) > after : after + 1 < first;
    let trimmed = trimmedBefore || after > last || after < purgedThrough || after < floor;
    const events: ChangeEvent[] = [];
    let bytes = 0;
    let examined = 0;
    let previous = after;
    for (const entry of page) {
      if (bytes >= maxBytes) break;
      examined++;
      if (field(entry, 'p') !== project) continue;
      const c = field(entry, 'c');
      if (c !== undefined && c !== collection) continue;
      const event = toEvent(entry);
      if (event.collection !== collection) continue;
      // Contiguity (as in the SQLite log): each entry names the collection's entry before it.
      const cp = Number(field(entry, 'cp') ?? 0);
      if (cp > 0 && (events.length === 0 ? cp > after : cp !== previous)) trimmed = true;
      previous = event.seq;
      events.push(event);
      bytes += Buffer.byteLength(field(entry, 'e') ?? '');
    }
    const done = page.length < limit && examined === page.length;
    const next = done ? Math.max(after, last) : seqOf(page[examined - 1]![0]);
    return { events, bytes, trimmed, next, done, epoch };
  }

  /** The shard's entries would have to be read to count them: the reader's limits bound it instead. */
  async countAfter(): Promise<null> {
    return null;
  }

  async tail(listener: EventListener, _wanted?: () => boolean, onReset?: TailReset): Promise<() => void> {
    const conn = this.redis.duplicate();
    let stopped = false;
    const streams = Array.from({ length: this.shards }, (_, i) => this.stream(i));
    const counters = Array.from({ length: this.shards }, (_, i) => this.counter(i));
    const loop = () =>
      runRedisTail({
        conn,
        streams,
        counters,
        epochKey: this.epochKey(),
        relayedKey: this.k.relayed(),
        floorKey: this.k.floor(),
        replayKey: this.k.replay(),
        blockMs: this.blockMs, listener, onReset, toEvent, stopped: () => stopped, ready });
    let ready: () => void = () => {};
    const positioned = new Promise<void>((r) => (ready = r));
    void loop().catch(() => ready());
    const stop = () => {
      stopped = true;
      conn.disconnect();
      this.stops.delete(stop);
    };
    this.stops.add(stop);
    await positioned;
    return stop;
  }

  /**
   * Appends the purge marker first (its seq is the purge point: readers resync from then on), then walks the project's shard
   * stream up to it with XRANGE, SCAN_CHUNK entries at a time, and XDELs the project's entries.
   * Bounded: a shard holds about maxEvents / shards entries, so at most that many are examined
   * (one round trip per chunk); other projects' entries stay.
   */
  async purge(project: ProjectId): Promise<number> {
    const shard = this.shardOf(project);
    const stream = this.stream(shard);
    const mark = (this.redis as unknown as { plinthMarkPurge: (...args: string[]) => Promise<number> }).plinthMarkPurge;
    const through = Number(
      await mark.call(this.redis, this.counter(shard), this.purgedKey(), stream, this.epochKey(), project, String(Date.now()), randomBytes(8).toString('hex')),
    );
    await this.deleteEntries(project, through);
    return through;
  }

  /**
   * A relayed log: the project was purged in the outbox at `through` (its marker's position,
   * which the relay copies too). Records the purge point and deletes the project's entries
   * before it from its shard stream (bounded as `purge`).
   */
  async forget(project: ProjectId, through: number): Promise<void> {
    await this.redis.eval(
      "local c = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0') if tonumber(ARGV[2]) > c then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end return 1",
      1,
      this.purgedKey(),
      project,
      through,
    );
    await this.deleteEntries(project, through);
  }

  private async deleteEntries(project: ProjectId, through: number): Promise<void> {
    const stream = this.stream(this.shardOf(project));
    let start = '-';
    for (;;) {
      const entries = (await this.redis.xrange(stream, start, `${through - 1}-0`, 'COUNT', SCAN_CHUNK)) as StreamEntry[];
      const mine = entries.filter((e) => field(e, 'p') === project).map((e) => e[0]);
      if (mine.length > 0) await this.redis.xdel(stream, ...mine);
      if (entries.length < SCAN_CHUNK) break;
      start = `${seqOf(entries[entries.length - 1]![0])}-1`;
    }
  }

  async trim(now = Date.now()): Promise<void> {
    const cutoff = now - this.retention.maxAgeMs;
    for (let shard = 0; shard < this.shards; shard++) {
      const stream = this.stream(shard);
      await this.redis.xtrim(stream, 'MAXLEN', this.perShard());
      // Age: entries are in commit order, so the old ones are a prefix; find its end.
      let start = '-';
      for (;;) {
        const entries = (await this.redis.xrange(stream, start, '+', 'COUNT', SCAN_CHUNK)) as StreamEntry[];
        const young = entries.find((e) => Number(field(e, 't')) >= cutoff);
        if (young) {
          await this.redis.xtrim(stream, 'MINID', young[0]);
          break;
        }
        if (entries.length < SCAN_CHUNK) {
          if (entries.length > 0) await this.redis.xtrim(stream, 'MINID', `${seqOf(entries[entries.length - 1]![0]) + 1}-0`);
          break;
        }
        start = `${seqOf(entries[entries.length - 1]![0])}-1`;
      }
    }
  }

  async purgedThrough(project: ProjectId): Promise<number> {
    return Number((await this.redis.hget(this.purgedKey(), project)) ?? 0);
  }

  async close(): Promise<void> {
    for (const stop of [...this.stops]) stop();
    if (this.ownsConnection) this.redis.disconnect();
  }
}
