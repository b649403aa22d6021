/**
 * Runs the standalone entry `gateway/dist/standalone.js` (what `npm start` runs after building)
 * as a real process and reads the start-up banner. Used by the standalone start-up and
 * end-to-end suites. Needs the build (jest's globalSetup runs it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');
export const STANDALONE_ENTRY = path.join(ROOT, 'gateway/dist/standalone.js');

export interface StandaloneProcess {
  child: ChildProcess;
  url: string;
  operatorKey: string;
  /** The demo project's keys. */
  publicKey: string;
  secretKey: string;
  output: () => string;
}

/**
 * Starts the standalone process on a free port with `PLINTH_DATA_DIR=dataDir` and `env` on top
 * of this process's environment, minus PLINTH_ADMIN_KEY (so the banner prints the stored key) and
 * the external services (REDIS_URL, MONGO_URL, SMTP_URL): everything embedded unless `env` says so.
 * One worker process unless `env` sets PLINTH_WORKERS.
 */
export async function startStandalone(dataDir: string, env: Record<string, string> = {}): Promise<StandaloneProcess> {
  const inherited: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['PLINTH_ADMIN_KEY', 'REDIS_URL', 'MONGO_URL', 'SMTP_URL']) delete inherited[name];
  const given = { ...inherited, PORT: '0', HOST: '127.0.0.1', PLINTH_DATA_DIR: dataDir, LOG_LEVEL: 'warn', PLINTH_SHUTDOWN_GRACE_MS: '0', PLINTH_WORKERS: '1', ...env };
  // An empty value in `env` unsets the variable (e.g. HOST: '' to get the default).
  const full = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== ''));
  const child = spawn(process.execPath, [STANDALONE_ENTRY], { env: full, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-200_000)));
  child.stderr!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-200_000)));
  const deadline = Date.now() + 30_000;
  while (!/Try it:/.test(out)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`standalone did not start:\n${out}`);
    }
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

/** Sends `signal` and resolves with the exit code (null when killed by a signal) once it exited. */
export async function stopStandalone(s: StandaloneProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return s.child.exitCode;
  const exited = new Promise<number | null>((r) => s.child.once('exit', (code) => r(code)));
  s.child.kill(signal);
  return exited;
}

export interface FreshResponse {
  status: number;
  body: unknown;
  /** X-Plinth-Worker: which worker process answered (with PLINTH_WORKERS > 1). */
  worker: string | undefined;
}

/**
 * One request on a new TCP connection (no keep-alive), so that with several workers the
 * primary hands successive requests to successive workers (round-robin).
 */
export function freshRequest(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: unknown; timeoutMs?: number } = {},
): Promise<FreshResponse> {
  const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: opts.method ?? 'GET',
        agent: false,
        headers: {
          Connection: 'close',
          ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(payload)) } : {}),
          ...opts.headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          let body: unknown = text;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            /* not JSON: keep the text */
          }
          const w = res.headers['x-plinth-worker'];
          resolve({ status: res.statusCode ?? 0, body, worker: typeof w === 'string' ? w : undefined });
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(opts.timeoutMs ?? 20_000, () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(payload);
  });
}
