/**
 * Secrets at rest, exposure and deployment safety, checked on the real processes (compiled
 * entry points, as `npm start` and the containers run them).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { STANDALONE_ENTRY, startStandalone, stopStandalone } from '@plinth/testing/standalone-process';
import { freePort } from '@plinth/testing/free-port';

const ROOT = path.resolve(__dirname, '../..');
const RECORDS_ENTRY = path.join(ROOT, 'services/records/dist/main.js');
const GATEWAY_ENTRY = path.join(ROOT, 'gateway/dist/main.js');
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

/** One line, no stack trace. */
function expectOneClearLine(out: string, mentions: string): void {
  const lines = out.trim().split('\n');
  expect({ lines: lines.length, text: out.trim() }).toEqual({ lines: 1, text: expect.stringContaining(mentions) });
  expect(out).not.toMatch(/\n\s+at /);
}

describe('standalone process: secrets at rest and exposure', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-safety-'));
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('creates its data directory 0700 with 0600 files, guards /metrics, keeps query values out of logs, and listens on 127.0.0.1', async () => {
    const dataDir = path.join(tmp, 'new', 'data');
    const metricsPort = await freePort();
    const s = await startStandalone(dataDir, { HOST: '', LOG_LEVEL: 'info', PLINTH_METRICS_PORT: String(metricsPort) });
    try {
      const marker = `m${Date.now().toString(36)}`;
      const where = JSON.stringify([['email', '==', `leak-${marker}@example.com`]]);
      const query = `?where=${encodeURIComponent(where)}&cursor=cur-${marker}&to=to-${marker}&key=key-${marker}`;
      const listed = await fetch(`${s.url}/v1/projects/demo/collections/people/records${query}`, { headers: { Authorization: `Bearer ${s.publicKey}` } });
      expect(listed.status).toBe(404);

      // Files: the directory is the user's alone, and so is every database file in it.
      expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
      const files = fs.readdirSync(dataDir);
      expect(files).toEqual(expect.arrayContaining(['auth.db', 'gateway.db', 'records.db', 'credentials.json']));
      // Directories (the stored files') 0700, every file 0600.
      for (const f of files) {
        const st = fs.statSync(path.join(dataDir, f));
        expect({ f, mode: (st.mode & 0o777).toString(8) }).toEqual({ f, mode: st.isDirectory() ? '700' : '600' });
      }

      // /metrics on the public port: the operator key only; on the metrics port: open to the scraper.
      expect((await fetch(`${s.url}/metrics`)).status).toBe(401);
      expect((await fetch(`${s.url}/metrics`, { headers: { Authorization: `Bearer ${s.secretKey}` } })).status).toBe(401);
      const operator = await fetch(`${s.url}/metrics`, { headers: { Authorization: `Bearer ${s.operatorKey}` } });
      expect(operator.status).toBe(200);
      expect(await operator.text()).toContain('plinth_http_requests_total');
      const scraped = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toContain('plinth_http_requests_total');

      // Logs: the request is there, its query values are not.
      const port = new URL(s.url).port;
      await new Promise((r) => setTimeout(r, 200)); // let the log line reach our pipe
      expect(s.output()).toContain('/v1/projects/demo/collections/people/records?where=[redacted]&cursor=[redacted]&to=[redacted]&key=[redacted]');
      expect(s.output()).not.toContain(marker);

      // Without HOST: 127.0.0.1 only — another loopback address of this machine is not served.
      await expect(fetch(`http://127.0.0.2:${port}/healthz`)).rejects.toThrow();
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    } finally {
      expect(await stopStandalone(s)).toBe(0);
    }

    // HOST=0.0.0.0 (what the Dockerfile sets) serves every address.
    const open = await startStandalone(dataDir, { HOST: '0.0.0.0' });
    try {
      expect((await fetch(`http://127.0.0.2:${new URL(open.url).port}/healthz`)).status).toBe(200);
    } finally {
      expect(await stopStandalone(open)).toBe(0);
    }
  }, 60_000);

  it('says in one line that the port is taken, and exits 1', async () => {
    const taken = net.createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      const dataDir = path.join(tmp, 'busy');
      const { code, out } = await runToExit(STANDALONE_ENTRY, { PORT: String(port), HOST: '127.0.0.1', PLINTH_DATA_DIR: dataDir });
      expect(code).toBe(1);
      expectOneClearLine(out, `127.0.0.1:${port}: the port is already in use`);
    } finally {
      await new Promise((r) => taken.close(r));
    }
  }, 30_000);
});

describe('cluster processes: deployment safety', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-cluster-safety-'));
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const service = (extra: Record<string, string>) => ({ PLINTH_INTERNAL_SECRET: SECRET, PLINTH_DATA_DIR: tmp, PORT: '0', ...extra });

  it.each([
    ['PLINTH_INTERNAL_SECRET', { PLINTH_INTERNAL_SECRET: 'replace-with-64-hex-characters-from-openssl-rand-hex-32' }],
    ['MONGO_URL', { MONGO_URL: 'mongodb://plinth:replace-me@mongo.plinth.svc.cluster.local:27017/plinth?replicaSet=rs0&authSource=admin' }],
    ['SMTP_URL', { SMTP_URL: 'smtps://user:replace-me@smtp.example.com:465' }],
  ])('refuses the example value of k8s/secret.yaml in %s (exit 1, naming it)', async (name, env) => {
    const { code, out } = await runToExit(RECORDS_ENTRY, service(env));
    expect(code).toBe(1);
    expectOneClearLine(out, `${name} still holds the example value of k8s/secret.yaml`);
  });

  it('refuses the example operator key at the gateway', async () => {
    const { code, out } = await runToExit(GATEWAY_ENTRY, {
      ...service({ PLINTH_STORAGE: 'sqlite' }),
      PLINTH_ADMIN_KEY: 'replace-with-adm_-and-48-hex-characters',
      RECORDS_URL: 'http://127.0.0.1:9',
      AUTH_URL: 'http://127.0.0.1:9',
      MAILER_URL: 'http://127.0.0.1:9',
    });
    expect(code).toBe(1);
    expectOneClearLine(out, 'PLINTH_ADMIN_KEY still holds the example value');
  });

  it('will not quietly use SQLite without MONGO_URL, unless PLINTH_STORAGE=sqlite says so', async () => {
    const refused = await runToExit(RECORDS_ENTRY, service({}));
    expect(refused.code).toBe(1);
    expectOneClearLine(refused.out, 'MONGO_URL is not set');
    expect(fs.existsSync(path.join(tmp, 'records.db'))).toBe(false);

    const taken = net.createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      // With SQLite chosen it gets as far as listening: here, on a port that is taken.
      const busy = await runToExit(RECORDS_ENTRY, service({ PLINTH_STORAGE: 'sqlite', PORT: String(port) }));
      expect(busy.code).toBe(1);
      expectOneClearLine(busy.out, `port is already in use`);
      expect(fs.existsSync(path.join(tmp, 'records.db'))).toBe(true);
    } finally {
      await new Promise((r) => taken.close(r));
    }
  });
});
