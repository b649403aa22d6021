import type { Redis, RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { DependencyBreaker } from './dependency-breaker';

/** How long one Redis command may take before it fails (the request then answers 503). */
export const REDIS_COMMAND_TIMEOUT_MS = 1000;

/**
 * Client options for a Redis that serves requests: a command fails within
 * REDIS_COMMAND_TIMEOUT_MS when Redis is down or hung (SIGSTOP, a full network partition)
 * instead of waiting for it, and is not retried across reconnects. Reconnects keep trying in the
 * background every ≤ 1 s, so service resumes as soon as Redis is back.
 */
export const REQUEST_REDIS_OPTIONS: RedisOptions = {
  commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
  connectTimeout: 2000,
  maxRetriesPerRequest: 1,
  retryStrategy: (times) => Math.min(100 * times, 1000),
};

/**
 * The ioredis module, loaded on first use: a process that never connects to Redis (standalone
 * without REDIS_URL) does not load it.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const loadIoredis = (): typeof import('ioredis') => require('ioredis') as typeof import('ioredis');

/** A Redis client with REQUEST_REDIS_OPTIONS whose connection errors are logged, not thrown. */
export function connectRedis(url: string, logger?: Logger, name = 'redis'): Redis {
  const redis = new (loadIoredis().Redis)(url, REQUEST_REDIS_OPTIONS);
  let lastLogged = 0;
  redis.on('error', (err: Error) => {
    // One line per 5 s while Redis is away, not one per reconnect attempt.
    if (Date.now() - lastLogged < 5000) return;
    lastLogged = Date.now();
    logger?.warn({ err: err.message, client: name }, 'redis connection error');
  });
  return redis;
}

const UNAVAILABLE_MESSAGES = [
  'Command timed out',
  'Connection is closed.',
  "Stream isn't writeable and enableOfflineQueue options is false",
  'Reached the max retries per request limit',
];
/** Replies of a Redis that is up but cannot serve: loading, read-only replica, out of memory, … */
const UNAVAILABLE_REPLIES = /^(LOADING|READONLY|MASTERDOWN|MISCONF|OOM|CLUSTERDOWN|TRYAGAIN|NOREPLICAS|BUSY)\b/;

/**
 * True for errors that mean "Redis cannot serve right now" (down, hung, restarting, read-only,
 * out of memory) as ioredis raises them; the error handler answers those with 503 `unavailable`.
 */
export function isRedisUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.name === 'MaxRetriesPerRequestError') return true;
  if (UNAVAILABLE_MESSAGES.some((m) => err.message.startsWith(m))) return true;
  return err.name === 'ReplyError' && UNAVAILABLE_REPLIES.test(err.message);
}

/**
 * A breaker for callers that can do without this Redis for a while (the nonce check, rate-limit
 * counters): skipped at once while the client is not connected, and for a moment after a
 * command failed (a hung Redis otherwise costs each caller the whole command timeout).
 */
export function redisBreaker(redis: Pick<Redis, 'status'>): DependencyBreaker {
  return new DependencyBreaker({ isDown: () => redis.status !== 'ready' });
}
