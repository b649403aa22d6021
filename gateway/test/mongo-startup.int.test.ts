/**
 * How a process meets its MongoDB before serving anything, on a wire-protocol stand-in
 * (shared/src/testing/wire-mongod.ts) the real driver connects to: a standalone mongod is
 * refused at start by every service that opens the shared client, and a start that fails after
 * connecting leaves no connection open.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { loadConfig, REPLICA_SET_REQUIRED } from '@plinth/shared';
import { waitFor } from '@plinth/shared/testing/wait-for';
import { startWireMongod, type WireMongod } from '@plinth/shared/testing/wire-mongod';
import { MongoRecordStore } from '@plinth/records';
import { authConfigSchema, buildAuthService } from '@plinth/auth';
import { STANDALONE_ENTRY } from '@plinth/testing/standalone-process';
import { createProjectStore } from '../src/store/from-config';

const ROOT = path.resolve(__dirname, '../..');
const ENTRY = {
  records: path.join(ROOT, 'services/records/dist/main.js'),
  auth: path.join(ROOT, 'services/auth/dist/main.js'),
  gateway: path.join(ROOT, 'gateway/dist/main.js'),
  standalone: STANDALONE_ENTRY,
};
const SECRET = 'c'.repeat(64);

/** Runs an entry point that is expected to stop by itself; its exit code and output. */
async function runToExit(entry: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const base: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn' };
  const child = spawn(process.execPath, [entry], { env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  clearTimeout(timer);
  return { code, out };
}

describe('a standalone mongod is refused at start', () => {
  let mongod: WireMongod;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-mongo-startup-'));
  beforeAll(async () => {
    mongod = await startWireMongod();
  });
  afterAll(async () => {
    await mongod.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  const env = (dir: string): { [service: string]: Record<string, string> } => ({
    records: { PLINTH_INTERNAL_SECRET: SECRET, PLINTH_DATA_DIR: dir, PORT: '0' },
    auth: { PLINTH_INTERNAL_SECRET: SECRET, PLINTH_DATA_DIR: dir, PORT: '0' },
    gateway: {
      PLINTH_INTERNAL_SECRET: SECRET,
      PLINTH_ADMIN_KEY: `adm_${'a'.repeat(40)}`,
      PLINTH_DATA_DIR: dir,
      PORT: '0',
      RECORDS_URL: 'http://127.0.0.1:1',
      AUTH_URL: 'http://127.0.0.1:1',
      MAILER_URL: 'http://127.0.0.1:1',
    },
    standalone: { PLINTH_DATA_DIR: dir, PORT: '0', PLINTH_WORKERS: '1' },
  });

  it.each(['records', 'auth', 'gateway', 'standalone'])('%s exits 1 with one line naming the replica-set requirement', async (service) => {
    const dir = fs.mkdtempSync(path.join(tmp, `${service}-`));
    const { code, out } = await runToExit(ENTRY[service as keyof typeof ENTRY], { ...env(dir)[service], MONGO_URL: mongod.url });
    expect(code).toBe(1);
    expect(out.trim()).toBe(REPLICA_SET_REQUIRED);
    expect(REPLICA_SET_REQUIRED).toContain('needs a replica set');
  }, 30_000);
});

describe('a start that fails after connecting closes the shared client', () => {
  let mongod: WireMongod;
  beforeEach(async () => {
    // A replica-set primary that refuses to build any index or write anything (a start's first
    // write is its data-version lock, before the indexes).
    mongod = await startWireMongod({
      replicaSet: 'rs0',
      answer: (name) => (name === 'createIndexes' || name === 'findAndModify' ? { ok: 0, errmsg: 'no space left for the index (stand-in)', code: 14031, codeName: 'OutOfDiskSpace' } : undefined),
    });
  });
  afterEach(() => mongod.close());

  const logger = pino({ level: 'silent' });
  it.each([
    ['gateway project store', (url: string) => createProjectStore({ mongoUrl: url, dataDir: os.tmpdir(), internalSecret: SECRET })],
    ['records store', (url: string) => MongoRecordStore.connect(url)],
    ['auth service', (url: string) => buildAuthService(loadConfig(authConfigSchema, { PLINTH_INTERNAL_SECRET: SECRET, MONGO_URL: url, PLINTH_DATA_DIR: os.tmpdir() }), logger)],
  ])('%s', async (_name, open) => {
    await expect(open(mongod.url)).rejects.toThrow(/no space left for the index/);
    await waitFor('every connection to be closed', () => mongod.openConnections() === 0, { timeoutMs: 5_000 });
  });
});
