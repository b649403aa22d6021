/**
 * Test harness: a running Plinth with a fresh project, driven through HTTP with supertest:
 * `request(t.app).get(...)`.
 *
 * Two topologies, chosen by `PLINTH_TEST_TOPOLOGY` (the jest `cluster` project sets it):
 * - `standalone` (default): the real standalone composition in-process (gateway + every service,
 *   SQLite in a temporary data directory); `t.app` is the gateway's express app.
 * - `cluster`: every service as its own process from its compiled main.js — two replicas each of
 *   records and auth, sessions and the mail queue on Redis — behind a gateway process; `t.app` is
 *   the gateway's URL. The same API suites run against both (issue 7).
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Express } from 'express';
import { asProjectId, createLogger, loadConfig, newSecret } from '@plinth/shared';
import { standaloneConfigSchema } from '../config';
import { generateKey } from '../keys';
import { composeStandalone, type Standalone } from '../standalone-compose';
import { startCluster, type Cluster } from './cluster';

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
  close(): Promise<void>;
}

let counter = 0;

export function testTopology(): TestTopology {
  return process.env.PLINTH_TEST_TOPOLOGY === 'cluster' ? 'cluster' : 'standalone';
}

export interface TestPlinthOptions {
  env?: Record<string, string>;
  /** Cluster topology: realtime replicas to run (default 0; standalone always has realtime in-process). */
  realtimeReplicas?: number;
}

export async function startTestPlinth(opts: TestPlinthOptions = {}): Promise<TestPlinth> {
  return testTopology() === 'cluster' ? startClusterPlinth(opts) : startStandalonePlinth(opts);
}

async function startClusterPlinth(opts: TestPlinthOptions): Promise<TestPlinth> {
  const cluster = await startCluster({
    replicas: { records: 2, auth: 2, realtime: opts.realtimeReplicas ?? 0 },
    env: {
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      // A queue of its own, so concurrently running suites never take each other's mail.
      PLINTH_MAIL_QUEUE: `test-mail-${process.pid}-${Date.now().toString(36)}-${++counter}`,
      PLINTH_MAIL_BACKOFF_MS: '50',
      ...opts.env,
    },
  });
  try {
    return {
      topology: 'cluster',
      cluster,
      app: cluster.url,
      adminKey: cluster.adminKey,
      project: await cluster.createProject(),
      dataDir: cluster.dataDir,
      createProject: (id) => cluster.createProject(id),
      url: async () => cluster.url,
      close: () => cluster.stop(),
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
    PLINTH_RATE_LIMIT_IP: '100000',
    PLINTH_RATE_LIMIT_EMAIL: '100000',
    ...opts.env,
    PLINTH_DATA_DIR: dataDir,
    PLINTH_ADMIN_KEY: opts.env?.PLINTH_ADMIN_KEY ?? newSecret('adm_', 24),
  };
  const config = loadConfig(standaloneConfigSchema, env);
  const logger = createLogger('plinth-test', String(env.LOG_LEVEL));
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
        await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
      }
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
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
