/**
 * Test harness: the real standalone composition (gateway + every service in-process, SQLite in
 * a temporary data directory) with a fresh project. Tests drive it through HTTP with supertest:
 * `request(t.app).get(...)`. Test-only; not part of the build.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Express } from 'express';
import { asProjectId, createLogger, loadConfig, newSecret } from '@plinth/shared';
import { standaloneConfigSchema } from '../config';
import { generateKey } from '../keys';
import { composeStandalone, type Standalone } from '../standalone-compose';

export interface TestProject {
  id: string;
  publicKey: string;
  secretKey: string;
}

export interface TestPlinth {
  /** The gateway's express app. */
  app: Express;
  adminKey: string;
  /** A project created for this harness. */
  project: TestProject;
  dataDir: string;
  standalone: Standalone;
  createProject(id?: string): Promise<TestProject>;
  close(): Promise<void>;
}

let counter = 0;

export async function startTestPlinth(opts: { env?: Record<string, string> } = {}): Promise<TestPlinth> {
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
  return {
    app: standalone.gateway.app,
    adminKey: String(env.PLINTH_ADMIN_KEY),
    project,
    dataDir,
    standalone,
    createProject,
    close: async () => {
      await standalone.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
