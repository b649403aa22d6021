import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
// Built by test/global-setup.js before any suite runs.
const ENTRY = path.join(ROOT, 'gateway/dist/standalone.js');

interface Started {
  child: ChildProcess;
  url: string;
  operatorKey: string;
  publicKey: string;
  secretKey: string;
  output: () => string;
}

/** Runs the standalone entry (what `npm start` runs after building) and reads the banner it prints. */
async function start(dataDir: string): Promise<Started> {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST: '127.0.0.1', PLINTH_DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
  delete env.PLINTH_ADMIN_KEY;
  const child = spawn(process.execPath, [ENTRY], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const deadline = Date.now() + 30_000;
  while (!/Try it:/.test(out)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`standalone did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const grab = (re: RegExp) => {
    const m = re.exec(out);
    if (!m) throw new Error(`banner lacks ${re}:\n${out}`);
    return m[1]!;
  };
  return {
    child,
    url: grab(/running \(standalone\) at (http:\/\/\S+)/),
    operatorKey: grab(/operator key:\s+(adm_\S+)/),
    publicKey: grab(/public key:\s+(pk_\S+)/),
    secretKey: grab(/secret key:\s+(sk_\S+)/),
    output: () => out,
  };
}

async function stop(s: Started): Promise<number | null> {
  const exited = new Promise<number | null>((r) => s.child.once('exit', (code) => r(code)));
  s.child.kill('SIGTERM');
  return exited;
}

describe('npm start (standalone mode) as a process', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-start-'));
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('serves /healthz, prints working keys, shuts down on SIGTERM, and reuses the keys on a second start', async () => {
    const first = await start(dataDir);
    try {
      expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
      const projects = await fetch(`${first.url}/v1/admin/projects`, { headers: { Authorization: `Bearer ${first.operatorKey}` } });
      expect(projects.status).toBe(200);
      expect(((await projects.json()) as { projects: Array<{ id: string }> }).projects.map((p) => p.id)).toEqual(['demo']);
      for (const key of [first.publicKey, first.secretKey]) {
        const res = await fetch(`${first.url}/v1/projects/demo/collections`, { headers: { Authorization: `Bearer ${key}` } });
        expect(res.status).not.toBe(401);
      }
      const wrong = await fetch(`${first.url}/v1/projects/demo/collections`, { headers: { Authorization: `Bearer ${first.publicKey}x` } });
      expect(wrong.status).toBe(401);
      const creds = fs.statSync(path.join(dataDir, 'credentials.json'));
      expect(creds.mode & 0o777).toBe(0o600);
    } finally {
      expect(await stop(first)).toBe(0);
    }

    const second = await start(dataDir);
    try {
      expect(second.operatorKey).toBe(first.operatorKey);
      expect(second.publicKey).toBe(first.publicKey);
      expect(second.secretKey).toBe(first.secretKey);
      const projects = await fetch(`${second.url}/v1/admin/projects`, { headers: { Authorization: `Bearer ${second.operatorKey}` } });
      expect(((await projects.json()) as { projects: unknown[] }).projects).toHaveLength(1);
    } finally {
      expect(await stop(second)).toBe(0);
    }
  }, 90_000);
});

describe('start-up configuration errors', () => {
  it.each([
    ['PORT', 'not-a-port'],
    ['PLINTH_INTERNAL_SECRET', 'too-short'],
    ['LOG_LEVEL', 'loud'],
  ])('stops with exit code 1 and names %s when it is invalid', (name, value) => {
    let code = 0;
    let stderr = '';
    try {
      execFileSync(process.execPath, [ENTRY], { env: { ...process.env, [name]: value }, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (e) {
      const err = e as { status: number; stderr: Buffer };
      code = err.status;
      stderr = err.stderr.toString();
    }
    expect(code).toBe(1);
    expect(stderr).toContain(`"${name}"`);
  });
});
