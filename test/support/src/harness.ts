/**
 * Test harness: a running Plinth with a fresh project, driven through HTTP with supertest:
 * `request(t.app).get(...)`.
 *
 * Two topologies, chosen by `PLINTH_TEST_TOPOLOGY` (the jest `cluster` project sets it):
 * - `standalone` (default): the real standalone composition in-process (gateway + every service,
 *   SQLite in a temporary data directory); `t.app` is the gateway's express app.
 * - `cluster`: every service as its own process from its compiled main.js — two replicas each of
 *   records and auth, sessions and the mail queue on Redis — behind a gateway process; `t.app` is
 *   the gateway's URL. The same API suites run against both.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Express } from 'express';
import { Redis } from 'ioredis';
import { DEFAULT_AUTH_REDIS_PREFIX, asProjectId, createLogger, loadConfig, newSecret } from '@plinth/shared';
import { RECORDS_RATE_LIMIT_PREFIX } from '@plinth/records';
import { composeStandalone, generateKey, standaloneConfigSchema, type Standalone } from '@plinth/gateway';
import { deleteMatching, scanKeys, startCluster, type Cluster } from './cluster';

export interface TestProject {
  id: string;
  publicKey: string;
  secretKey: string;
}

export type TestTopology = 'standalone' | 'cluster';

export interface TestPlinth {
  topology: TestTopology;
  /** What supertest sends to: the gateway's express app (standalone) or its URL (cluster). */
  app: Express | string;
  adminKey: string;
  /** A project created for this harness. */
  project: TestProject;
  dataDir: string;
  /** The in-process composition; undefined in the cluster topology. */
  standalone?: Standalone;
  /** The processes of the cluster topology; undefined in standalone. */
  cluster?: Cluster;
  createProject(id?: string): Promise<TestProject>;
  /** A base URL to reach the gateway over real HTTP (standalone: starts a listener on first call). */
  url(): Promise<string>;
  /** Stops everything; in the cluster topology also deletes what the run wrote to the shared Redis. */
  close(): Promise<void>;
  /**
   * Cluster topology: keys of this run still in the shared Redis (its mail queue, the auth keys
   * of its projects). Empty after `close()`. Always empty in standalone.
   */
  leftoverRedisKeys(): Promise<string[]>;
}

let counter = 0;
/** Unique to this test process: project ids of different runs never meet in the shared Redis. */
const RUN = `${process.pid.toString(36)}${Date.now().toString(36)}`;

export function testTopology(): TestTopology {
  return process.env.PLINTH_TEST_TOPOLOGY === 'cluster' ? 'cluster' : 'standalone';
}

export interface TestPlinthOptions {
  env?: Record<string, string>;
  /** The gateway's port (cluster: the gateway process; standalone: `url()`'s listener), e.g. to match PLINTH_PUBLIC_URL. */
  gatewayPort?: number;
  /** Cluster topology: realtime replicas to run (default 0; standalone always has realtime in-process). */
  realtimeReplicas?: number;
  /** Standalone topology: every log line of every service goes here (with `env.LOG_LEVEL`) instead of stdout. */
  logs?: { write(line: string): void };
  /** This topology whatever PLINTH_TEST_TOPOLOGY says (a suite that moves data from one to the other). */
  topology?: TestTopology;
}

export async function startTestPlinth(opts: TestPlinthOptions = {}): Promise<TestPlinth> {
  return (opts.topology ?? testTopology()) === 'cluster' ? startClusterPlinth(opts) : startStandalonePlinth(opts);
}

/**
 * What a cluster run writes to the shared Redis: its mail queue, its projects' auth keys and
 * their rate-limit counters (auth's and records'). The cluster deletes its own event streams and
 * nonces (cluster.ts).
 */
function redisFootprint(redisUrl: string, queueNames: string[], projects: () => Promise<string[]>) {
  const patterns = async () => [
    ...queueNames.map((q) => `bull:${q}:*`),
    ...(await projects()).flatMap((p) => [
      ...['sess', 'rt', 'user', 'revoked'].map((k) => `${DEFAULT_AUTH_REDIS_PREFIX}${k}:${p}:*`),
      `${DEFAULT_AUTH_REDIS_PREFIX}rl:*:${p}:*`,
      `${RECORDS_RATE_LIMIT_PREFIX}*:${p}:*`,
    ]),
  ];
  const withRedis = async <T>(fn: (redis: Redis) => Promise<T>): Promise<T> => {
    const redis = new Redis(redisUrl, { maxRetriesPerRequest: 2 });
    try {
      return await fn(redis);
    } finally {
      redis.disconnect();
    }
  };
  return {
    keys: async (list: string[]) => withRedis(async (redis) => (await Promise.all(list.map((p) => scanKeys(redis, p)))).flat()),
    patterns,
    remove: async (list: string[]) =>
      withRedis(async (redis) => {
        for (const pattern of list) await deleteMatching(redis, pattern);
      }),
  };
}

async function startClusterPlinth(opts: TestPlinthOptions): Promise<TestPlinth> {
  const redisUrl = opts.env?.REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  // A queue of its own, so concurrently running suites never take each other's mail.
  const queueName = `test-mail-${process.pid}-${Date.now().toString(36)}-${++counter}`;
  const webhookQueueName = `test-webhooks-${process.pid}-${Date.now().toString(36)}-${counter}`;
  const cluster = await startCluster({
    replicas: { records: 2, auth: 2, realtime: opts.realtimeReplicas ?? 0 },
    gatewayPort: opts.gatewayPort,
    env: {
      REDIS_URL: redisUrl,
      PLINTH_MAIL_QUEUE: queueName,
      PLINTH_MAIL_BACKOFF_MS: '50',
      PLINTH_WEBHOOK_QUEUE: webhookQueueName,
      ...opts.env,
    },
  });
  // Every project of the run, deleted ones included: the gateway lists the live ones at the end.
  const seen = new Set<string>();
  const projectsOfRun = async (): Promise<string[]> => {
    try {
      const res = await fetch(`${cluster.url}/v1/admin/projects`, { headers: { Authorization: `Bearer ${cluster.adminKey}` } });
      if (res.ok) for (const p of ((await res.json()) as { projects: Array<{ id: string }> }).projects) seen.add(p.id);
    } catch {
      // the gateway is already stopped: use what was seen
    }
    return [...seen];
  };
  const footprint = redisFootprint(redisUrl, [queueName, webhookQueueName], projectsOfRun);
  const createProject = async (id?: string) => {
    const p = await cluster.createProject(id ?? `c-${RUN}-${++counter}`);
    seen.add(p.id);
    return p;
  };
  try {
    return {
      topology: 'cluster',
      cluster,
      app: cluster.url,
      adminKey: cluster.adminKey,
      project: await createProject(),
      dataDir: cluster.dataDir,
      createProject,
      url: async () => cluster.url,
      close: async () => {
        const patterns = await footprint.patterns();
        await cluster.stop();
        await footprint.remove(patterns);
      },
      leftoverRedisKeys: async () => footprint.keys(await footprint.patterns()),
    };
  } catch (err) {
    await cluster.stop();
    throw err;
  }
}

async function startStandalonePlinth(opts: TestPlinthOptions): Promise<TestPlinth> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-test-'));
  const env: NodeJS.ProcessEnv = {
    LOG_LEVEL: 'silent',
    PLINTH_BCRYPT_COST: '4',
    PLINTH_OPERATOR_BCRYPT_COST: '4',
    PLINTH_RATE_LIMIT_IP: '100000',
    PLINTH_RATE_LIMIT_EMAIL: '100000',
    ...opts.env,
    PLINTH_DATA_DIR: dataDir,
    PLINTH_ADMIN_KEY: opts.env?.PLINTH_ADMIN_KEY ?? newSecret('adm_', 24),
  };
  const config = loadConfig(standaloneConfigSchema, env);
  const logger = createLogger('plinth-test', String(env.LOG_LEVEL), opts.logs);
  const standalone = await composeStandalone({ ...config, PLINTH_ADMIN_KEY: String(env.PLINTH_ADMIN_KEY) }, env, logger);

  const createProject = async (id?: string): Promise<TestProject> => {
    const pid = asProjectId(id ?? `t-${process.pid}-${++counter}-${Date.now().toString(36)}`);
    const now = new Date();
    const pub = generateKey(pid, 'public', now);
    const sec = generateKey(pid, 'secret', now);
    await standalone.store.createProject({ id: pid, name: pid, created_at: now.toISOString() }, [pub.record, sec.record]);
    return { id: pid, publicKey: pub.value, secretKey: sec.value };
  };

  const project = await createProject();
  let server: http.Server | null = null;
  return {
    topology: 'standalone',
    app: standalone.gateway.app,
    adminKey: String(env.PLINTH_ADMIN_KEY),
    project,
    dataDir,
    standalone,
    createProject,
    url: async () => {
      if (!server) {
        server = http.createServer(standalone.gateway.app);
        server.on('upgrade', standalone.gateway.upgrade);
        await new Promise<void>((r) => server!.listen(opts.gatewayPort ?? 0, '127.0.0.1', r));
      }
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    leftoverRedisKeys: async () => [],
    close: async () => {
      await standalone.closeConnections();
      if (server) {
        server.closeAllConnections();
        await new Promise((r) => server!.close(r));
      }
      await standalone.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
