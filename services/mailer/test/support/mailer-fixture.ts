import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import type { Express } from 'express';
import { BullMqMailQueue, createLogger, loadConfig, newId, type BuiltService, type MailRetryPolicy } from '@plinth/shared';
import { buildMailerService, mailerConfigSchema, type MailerConfig, type MailerServiceOptions } from '@plinth/mailer';
import { TEST_INTERNAL_SECRET } from './internal-request';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface MailerFixture {
  service: BuiltService;
  config: MailerConfig;
  dataDir: string;
}

/** A fresh data directory, removed by `removeDataDir`. */
export function makeDataDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-mailer-'));
}

export function removeDataDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}

/** Builds the mailer exactly as main.ts does, from environment variables, with fast retries. */
export async function startMailer(
  env: Record<string, string>,
  opts: MailerServiceOptions = {},
): Promise<MailerFixture> {
  const dataDir = env.PLINTH_DATA_DIR ?? makeDataDir();
  const config = loadConfig(mailerConfigSchema, {
    PLINTH_INTERNAL_SECRET: TEST_INTERNAL_SECRET,
    PLINTH_MAIL_POLL_MS: '10',
    PLINTH_MAIL_BACKOFF_MS: '20',
    PLINTH_MAIL_ATTEMPTS: '3',
    ...env,
    PLINTH_DATA_DIR: dataDir,
  });
  const service = await buildMailerService(config, createLogger('mailer-test', 'silent'), {
    logRequests: false,
    ...opts,
  });
  return { service, config, dataDir };
}

/** A BullMQ mail queue on a queue name of its own; `dispose` closes and obliterates it. */
export function uniqueBullQueue(policy: MailRetryPolicy): { queue: BullMqMailQueue; dispose: () => Promise<void> } {
  const queue = new BullMqMailQueue({ ...policy, redisUrl: REDIS_URL, queueName: newId('test-mailer-') });
  return {
    queue,
    dispose: async () => {
      await queue.obliterate();
      await queue.close();
    },
  };
}

/** The sum of the samples of `name` on /metrics whose labels include `labels` (0 when none). */
export async function metricValue(app: Express, name: string, labels: Record<string, string> = {}): Promise<number> {
  const res = await request(app).get('/metrics').expect(200);
  let total = 0;
  for (const line of (res.text as string).split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) total += Number(match[3]);
  }
  return total;
}
