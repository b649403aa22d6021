import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { ChangeEvent, EventListener, TailReset } from './event-bus';

type StreamEntry = [id: string, fields: string[]];

/** Replaces the epoch only while it is still `ARGV[1]` (several tails may see the same loss). */
const RENEW_EPOCH = `
local current = redis.call('GET', KEYS[1]) or ''
if current == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2]) return ARGV[2] end
return current
`;

export interface RedisTailOptions {
  conn: Redis;
  streams: string[];
  counters: string[];
  epochKey: string;
  /** Keys of a relayed log (outbox-relay.ts): the last position copied, the floor, the replay point. */
  relayedKey: string;
  floorKey: string;
  replayKey: string;
  blockMs: number;
  listener: EventListener;
  onReset?: TailReset;
  toEvent: (entry: StreamEntry) => ChangeEvent;
  stopped: () => boolean;
  /** Called once the tail is positioned. */
  ready: () => void;
}

function seqOf(id: string): number {
  return Number(id.slice(0, id.indexOf('-')));
}

/** The entry's `sp` (relayed entries: the seq of the entry before it in its shard), or null. */
function shardPrev(entry: StreamEntry): number | null {
  const f = entry[1];
  for (let i = 0; i < f.length; i += 2) if (f[i] === 'sp') return Number(f[i + 1]);
  return null;
}

interface Positions {
  epoch: string;
  counters: number[];
  /** Relayed log: the last outbox position copied (null: not a relayed log, or Redis is empty). */
  relayed: number | null;
  floor: number;
  replay: number;
}

/**
 * The tail of the Redis streams (docs/architecture.md "Positions and epochs"). Before each
 * blocking read it reads the epoch and every shard's counter in one round trip:
 * - another epoch: the log was made anew (Redis restarted empty, or a relay saw it lose entries)
 *   → `onReset('epoch')`, and the tail goes on from the streams' ends as they are now;
 * - a counter below what the tail already read: this Redis lost entries it had acknowledged
 *   (failover to a replica that lagged) → a new epoch is set (so no position read before can be
 *   resumed from) and `onReset('epoch')`;
 * - an entry whose seq does not follow the last one read in its shard (every append and purge
 *   marker takes the next seq): a gap → `onReset('gap')`.
 * Marker entries (collection '') are not delivered.
 *
 * A relayed log (the outbox relay copies the store's outbox: outbox-relay.ts) holds positions
 * the store assigned, so a Redis that lost entries is refilled by the relay under the same
 * positions and epoch. There the tail does not reset when counters go back or the epoch is
 * briefly missing (Redis empty, being refilled): it reads on after what it delivered. It checks
 * instead that each entry names the one it read before in its shard (`sp`), and that the
 * relay's floor (positions never copied into this Redis) is not above what it delivered. When
 * it does (re)position, it skips entries at or below the replay point: they committed earlier.
 */
export async function runRedisTail(o: RedisTailOptions): Promise<void> {
  const { conn, streams } = o;
  const positions = async (): Promise<Positions> => {
    const replies = await conn.multi().get(o.epochKey).mget(...o.counters).get(o.relayedKey).get(o.floorKey).get(o.replayKey).exec();
    if (!replies) throw new Error('tail positioning aborted');
    for (const [err] of replies) if (err) throw err;
    const counters = (replies[1]![1] as Array<string | null>).map((c) => Number(c ?? 0));
    const relayed = replies[2]![1] as string | null;
    return {
      epoch: (replies[0]![1] as string | null) ?? '',
      counters,
      relayed: relayed === null ? null : Number(relayed),
      floor: Number((replies[3]![1] as string | null) ?? 0),
      replay: Number((replies[4]![1] as string | null) ?? 0),
    };
  };
  const start = await positions();
  let epoch = start.epoch;
  let last = start.counters;
  let relayedMode = start.relayed !== null;
  /** Entries at or below it are not delivered (they committed before the tail positioned). */
  let skipThrough = start.replay;
  /** The highest position delivered or positioned at. */
  let seen = Math.max(0, start.relayed ?? 0, ...last);
  const reposition = (now: Positions, reason: 'gap' | 'epoch') => {
    last = now.counters;
    skipThrough = now.replay;
    seen = Math.max(0, now.relayed ?? 0, ...last);
    o.onReset?.(reason);
  };
  o.ready();
  while (!o.stopped()) {
    let res: [string, StreamEntry[]][] | null;
    try {
      const now = await positions();
      if (now.relayed !== null) relayedMode = true;
      if (relayedMode) {
        // Empty (being refilled by the relay): read on after what was delivered.
        if (now.epoch !== '' && now.epoch !== epoch) {
          const wasSet = epoch !== '';
          epoch = now.epoch;
          if (wasSet) reposition(now, 'epoch');
        } else if (now.epoch !== '' && now.floor > seen) {
          // Positions after what was delivered were never copied into this Redis.
          reposition(now, 'gap');
        }
      } else {
        const lost = now.counters.some((c, i) => c < last[i]!);
        if (lost && now.epoch === epoch && epoch !== '') {
          now.epoch = String(await conn.eval(RENEW_EPOCH, 1, o.epochKey, epoch, randomBytes(8).toString('hex')));
        }
        if (now.epoch !== epoch) {
          // From none to one: the first append to an empty Redis (the tail already reset when the
          // old epoch vanished, and reads on from there). Otherwise: a new history, read from its ends.
          const reset = epoch !== '' || lost;
          epoch = now.epoch;
          if (reset) reposition(now, 'epoch');
        }
      }
      res = (await conn.xread('COUNT', 1000, 'BLOCK', o.blockMs, 'STREAMS', ...streams, ...last.map((s) => `${s}-0`))) as
        | [string, StreamEntry[]][]
        | null;
    } catch {
      // Redis unreachable: retry; the next round checks the epoch and counters before reading on.
      if (o.stopped()) return;
      await new Promise((r) => setTimeout(r, 200));
      continue;
    }
    if (!res) continue;
    for (const [stream, entries] of res) {
      const i = streams.indexOf(stream);
      if (entries.length === 0) continue;
      let gap = false;
      let previous = last[i]!;
      for (const e of entries) {
        const sp = shardPrev(e);
        if (sp !== null ? sp !== previous : seqOf(e[0]) !== previous + 1) gap = true;
        previous = seqOf(e[0]);
      }
      last[i] = previous;
      seen = Math.max(seen, previous);
      if (gap) o.onReset?.('gap');
      const events = entries.filter((e) => seqOf(e[0]) > skipThrough).map(o.toEvent).filter((e) => e.collection !== '');
      if (events.length > 0) o.listener(events);
    }
  }
}
