import { createHash } from 'node:crypto';

/**
 * Names of the Redis keys of the event log (layout: redis-event-bus.ts). Shared by the bus (its
 * readers, its tail) and the outbox relay, which writes the same streams.
 */
export class RedisEventKeys {
  constructor(
    readonly prefix: string,
    readonly shards: number,
  ) {}

  /** A project always maps to the same shard. */
  shardOf(project: string): number {
    return createHash('sha1').update(project).digest().readUInt32BE(0) % this.shards;
  }
  stream(shard: number): string {
    return `${this.prefix}s:${shard}`;
  }
  /** The last seq in shard n (assigned by INCR, or — relayed — the last outbox position copied into it). */
  counter(shard: number): string {
    return `${this.prefix}seq:${shard}`;
  }
  heads(shard: number): string {
    return `${this.prefix}heads:${shard}`;
  }
  purged(): string {
    return `${this.prefix}purged`;
  }
  epoch(): string {
    return `${this.prefix}epoch`;
  }
  /** Relayed log: the last outbox position copied to Redis (every shard). */
  relayed(): string {
    return `${this.prefix}relayed`;
  }
  /** Relayed log: positions at or below it were never copied into this Redis (it was filled from a trimmed outbox). */
  floor(): string {
    return `${this.prefix}floor`;
  }
  /**
   * Relayed log: the outbox head when the relay began refilling an empty Redis. A tail that
   * (re)positions skips entries at or below it: they committed before it positioned.
   */
  replay(): string {
    return `${this.prefix}replay`;
  }
  /** The relay's lease: the token of the one records process that copies the outbox. */
  lease(): string {
    return `${this.prefix}relay:lease`;
  }
  /** Every key of the log. */
  all(): string[] {
    const out: string[] = [];
    for (let i = 0; i < this.shards; i++) out.push(this.stream(i), this.counter(i), this.heads(i));
    out.push(this.purged(), this.epoch(), this.relayed(), this.floor(), this.replay(), this.lease());
    return out;
  }
}
