import path from 'node:path';
import Joi from 'joi';
import { loadIoredis } from '../redis';
import { DEFAULT_EVENT_RETENTION, type EventBus } from './event-bus';
import { RedisEventBus } from './redis-event-bus';
import { SqliteEventBus } from './sqlite-event-bus';

/** Environment read by every process that writes or reads change events (records, realtime). */
export interface EventBusConfig {
  PLINTH_DATA_DIR: string;
  REDIS_URL?: string;
  /** Events kept in total (cluster: split evenly across the stream shards). */
  PLINTH_EVENTS_MAX: number;
  /** Events older than this many minutes are trimmed. */
  PLINTH_EVENTS_MAX_AGE_MINUTES: number;
  /** Cluster: number of Redis streams the projects are spread over. Changing it strands history. */
  PLINTH_EVENTS_SHARDS: number;
  /** Cluster: key prefix of the event streams. */
  PLINTH_EVENTS_PREFIX: string;
  /**
   * Standalone: how often each process looks for events other processes appended (ms). A
   * backstop: standalone workers also wake each other when they append (the primary relays it).
   */
  PLINTH_EVENTS_POLL_MS: number;
}

export const eventBusConfigSchema = {
  PLINTH_EVENTS_MAX: Joi.number().integer().min(100).max(100_000_000).default(DEFAULT_EVENT_RETENTION.maxEvents),
  PLINTH_EVENTS_MAX_AGE_MINUTES: Joi.number().integer().min(1).max(10_080).default(DEFAULT_EVENT_RETENTION.maxAgeMs / 60_000),
  PLINTH_EVENTS_SHARDS: Joi.number().integer().min(1).max(1024).default(8),
  PLINTH_EVENTS_PREFIX: Joi.string().default('plinth:events:'),
  PLINTH_EVENTS_POLL_MS: Joi.number().integer().min(1).max(60_000).default(20),
};

/**
 * Redis Streams when REDIS_URL is set, else the SQLite log in the records database
 * `${PLINTH_DATA_DIR}/records.db` (the outbox its writes append to: sqlite-outbox.ts).
 */
export function createEventBusFromConfig(config: EventBusConfig): EventBus {
  const retention = { maxEvents: config.PLINTH_EVENTS_MAX, maxAgeMs: config.PLINTH_EVENTS_MAX_AGE_MINUTES * 60_000 };
  if (config.REDIS_URL) {
    return new RedisEventBus({
      redis: new (loadIoredis().Redis)(config.REDIS_URL, { maxRetriesPerRequest: 2 }),
      ownsConnection: true,
      prefix: config.PLINTH_EVENTS_PREFIX,
      shards: config.PLINTH_EVENTS_SHARDS,
      retention,
    });
  }
  return new SqliteEventBus({ file: path.join(config.PLINTH_DATA_DIR, 'records.db'), retention, pollMs: config.PLINTH_EVENTS_POLL_MS });
}

/** Calls `bus.trim()` every `intervalMs`; returns a function that stops it. */
export function startTrimming(bus: EventBus, intervalMs = 60_000, onError: (err: unknown) => void = () => {}): () => void {
  const timer = setInterval(() => void bus.trim().catch(onError), intervalMs);
  timer.unref?.();
  return () => clearInterval(timer);
}
