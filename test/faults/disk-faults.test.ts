import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { mountTinyDisk, type TinyDisk } from '@plinth/shared/testing/tiny-disk';
import { startStandalone, stopStandalone, STANDALONE_ENTRY, type StandaloneProcess } from '@plinth/testing/standalone-process';

/**
 * Faults of the disk under PLINTH_DATA_DIR, on real file systems (tmpfs mounts; the suite needs
 * root, as CI's container has): a read-only data directory at start-up, and a disk that fills up
 * while the standalone server runs.
 */
const ROOT = path.resolve(__dirname, '../..');

async function runToExit(entry: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [entry], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: '0', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(timer);
  return { code, output };
}

describe('an unwritable PLINTH_DATA_DIR at start-up', () => {
  let dir: string;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-rodisk-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', dir]);
  });
  afterAll(() => {
    execFileSync('umount', ['-l', dir]);
    fs.rmdirSync(dir);
  });

  it.each([
    ['standalone (npm start)', STANDALONE_ENTRY, {}],
    ['records', path.join(ROOT, 'services/records/dist/main.js'), { PLINTH_INTERNAL_SECRET: 'x'.repeat(40), PLINTH_STORAGE: 'sqlite' }],
  ])('%s: one line naming the variable, exit status 1', async (_name, entry, env) => {
    for (const dataDir of [dir, path.join(dir, 'nested')]) {
      const { code, output } = await runToExit(entry, { ...env, PLINTH_DATA_DIR: dataDir });
      expect(code).toBe(1);
      const lines = output.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^PLINTH_DATA_DIR: cannot write to /);
    }
  });
});

describe('the disk under the standalone server fills up', () => {
  let disk: TinyDisk;
  let server: StandaloneProcess;

  const call = async (method: string, p: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${server.url}/v1/projects/demo${p}`, {
      method,
      headers: { Authorization: `Bearer ${server.secretKey}`, 'Content-Type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as { error?: string; message?: string; records?: { body: string }[] } };
  };
  const readyz = async () => {
    const res = await fetch(`${server.url}/readyz`);
    return { status: res.status, body: (await res.json()) as { message?: string } };
  };

  beforeAll(async () => {
    disk = mountTinyDisk(16 * 1024 * 1024);
    // A secret-key limit of 1000 makes the counters write every 10 hits (1 %); one trusted proxy
    // lets X-Forwarded-For name a new client address, whose first hit is written at once.
    server = await startStandalone(path.join(disk.dir, 'data'), { PLINTH_RATE_LIMIT_SECRET_KEY: '1000', PLINTH_TRUST_PROXY: '1' });
    expect((await call('POST', '/collections', { name: 'notes', fields: { body: { type: 'text' } } })).status).toBe(201);
  }, 60_000);

  afterAll(async () => {
    if (server) await stopStandalone(server);
    disk.free();
    disk.unmount();
  });

  it('answers writes 507 insufficient_storage saying the disk is full, keeps reads, reports it in /readyz, and recovers', async () => {
    expect((await call('POST', '/collections/notes/records', { data: { body: 'before' } })).status).toBe(201);
    disk.fill();
    try {
      const write = await call('POST', '/collections/notes/records', { data: { body: 'while full' } });
      expect(write.status).toBe(507);
      expect(write.body.error).toBe('insufficient_storage');
      expect(write.body.message).toMatch(/disk is full/i);

      const read = await call('GET', '/collections/notes/records');
      expect(read.status).toBe(200);
      expect(read.body.records!.map((r) => r.body)).toEqual(['before']);

      const ready = await readyz();
      expect(ready.status).toBe(503);
      expect(ready.body.message).toMatch(/disk .*is full/i);
    } finally {
      disk.free();
    }
    expect((await readyz()).status).toBe(200);
    expect((await call('POST', '/collections/notes/records', { data: { body: 'after' } })).status).toBe(201);
    const read = await call('GET', '/collections/notes/records');
    expect(read.body.records!.map((r) => r.body)).toEqual(['before', 'after']);
  });

  it('keeps answering reads 200 while the rate-limit counters cannot be written; writes stay 507', async () => {
    disk.fill();
    try {
      // 150 secret-key reads: a counter write every 10 of them. Then 30 anonymous public-key
      // reads, each from a new address: a counter write each.
      const reads: number[] = [];
      for (let i = 0; i < 150; i++) reads.push((await call('GET', '/collections/notes/records')).status);
      for (let i = 0; i < 30; i++) {
        const anonymous = await call('GET', '/collections', undefined, { Authorization: `Bearer ${server.publicKey}`, 'X-Forwarded-For': `203.0.113.${i}` });
        reads.push(anonymous.status);
      }
      expect(reads).toEqual(Array<number>(180).fill(200));
      const write = await call('POST', '/collections/notes/records', { data: { body: 'while full' } });
      expect({ status: write.status, error: write.body.error }).toEqual({ status: 507, error: 'insufficient_storage' });
      expect((await readyz()).status).toBe(503);
    } finally {
      disk.free();
    }
    expect((await call('POST', '/collections/notes/records', { data: { body: 'after again' } })).status).toBe(201);
  });
});
