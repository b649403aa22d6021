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
 */
export async function runRedisTail(o: RedisTailOptions): Promise<void> {
  const { conn, streams } = o;
  const positions = async (): Promise<{ epoch: string; counters: number[] }> => {
    const replies = await conn.multi().get(o.epochKey).mget(...o.counters).exec();
    if (!replies) throw new Error('tail positioning aborted');
    for (const [err] of replies) if (err) throw err;
    const counters = (replies[1]![1] as Array<string | null>).map((c) => Number(c ?? 0));
    return { epoch: (replies[0]![1] as string | null) ?? '', counters };
  };
  let { epoch, counters: last } = await positions();
  o.ready();
  let failed = false;
  while (!o.stopped()) {
    let res: [string, StreamEntry[]][] | null;
    try {
      const now = await positions();
      const lost = now.counters.some((c, i) => c < last[i]!);
      if (lost && now.epoch === epoch && epoch !== '') {
        now.epoch = String(await conn.eval(RENEW_EPOCH, 1, o.epochKey, epoch, randomBytes(8).toString('hex')));
      }
      if (now.epoch !== epoch) {
        // From none to one: the first append to an empty Redis (the tail already reset when the
        // old epoch vanished, and reads on from there). Otherwise: a new history, read from its ends.
        const reset = epoch !== '' || lost;
        epoch = now.epoch;
        if (reset) {
          last = now.counters;
          o.onReset?.('epoch');
        }
      }
      failed = false;
      res = (await conn.xread('COUNT', 1000, 'BLOCK', o.blockMs, 'STREAMS', ...streams, ...last.map((s) => `${s}-0`))) as
        | [string, StreamEntry[]][]
        | null;
    } catch {
      // Redis unreachable: retry; the next round checks the epoch and counters before reading on.
      if (o.stopped()) return;
      if (!failed) failed = true;
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
        if (seqOf(e[0]) !== previous + 1) gap = true;
        previous = seqOf(e[0]);
      }
      last[i] = previous;
      if (gap) o.onReset?.('gap');
      const events = entries.map(o.toEvent).filter((e) => e.collection !== '');
      if (events.length > 0) o.listener(events);
    }
  }
}
