/**
 * What an end-to-end run puts in the shared Redis (127.0.0.1:6379): a BullMQ queue of its own
 * (PLINTH_MAIL_QUEUE), and the auth keys and rate-limit counters (auth's and records') of its own
 * projects. All are removed after the run.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { BullMqMailQueue, DEFAULT_AUTH_REDIS_PREFIX, newId } from '@plinth/shared';
import { RECORDS_RATE_LIMIT_PREFIX } from '@plinth/records';
import { deleteMatching } from '@plinth/testing/cluster';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface RedisRun {
  /** The run's BullMQ queue name: pass as PLINTH_MAIL_QUEUE to every process. */
  queueName: string;
  /** A project id no other run uses (auth keys in Redis are per project). */
  projectId(label: string): string;
  /** Obliterates the queue and deletes the auth keys and rate-limit counters of every project handed out. */
  cleanUp(): Promise<void>;
}

export function redisRun(label: string): RedisRun {
  const queueName = newId(`e2e-${label}-`);
  const projects: string[] = [];
  return {
    queueName,
    projectId: (name) => {
      const id = `${name}-${randomBytes(4).toString('hex')}`;
      projects.push(id);
      return id;
    },
    cleanUp: async () => {
      const queue = new BullMqMailQueue({ redisUrl: REDIS_URL, queueName, attempts: 1, backoffMs: 1 });
      await queue.obliterate();
      await queue.close();
      const redis = new Redis(REDIS_URL);
      try {
        for (const p of projects) {
          await deleteMatching(redis, `${DEFAULT_AUTH_REDIS_PREFIX}*${p}*`);
          await deleteMatching(redis, `${RECORDS_RATE_LIMIT_PREFIX}*:${p}:*`);
        }
      } finally {
        await redis.quit();
      }
    },
  };
}
