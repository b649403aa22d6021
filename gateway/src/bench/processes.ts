import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';

export interface BenchProcess {
  url: string;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

/**
 * Runs a compiled entry point (relative to the repository root) as its own process, so the load
 * generator never shares an event loop with the server, and waits until `probe` answers 2xx/4xx.
 */
export async function runEntry(entry: string, env: NodeJS.ProcessEnv, probe = '/healthz'): Promise<BenchProcess & { child: ChildProcess; output: () => string }> {
  const port = await freePort();
  const root = path.resolve(__dirname, '../../..');
  const child = spawn(process.execPath, [path.join(root, entry)], {
    env: { ...process.env, LOG_LEVEL: 'silent', PLINTH_SHUTDOWN_GRACE_MS: '0', ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-50_000)));
  child.stderr!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-50_000)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const res = await fetch(url + probe);
      if (res.status < 500) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${entry} did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    child,
    output: () => out,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
