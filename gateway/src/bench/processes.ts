import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
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

/** Resident set size of a process in bytes (Linux /proc), 0 once it is gone. */
function rssOf(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** The process and its direct children (standalone's primary and workers). */
function treeRss(pid: number): number {
  let children: number[] = [];
  try {
    children = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    // no such process
  }
  return rssOf(pid) + children.reduce((sum, c) => sum + rssOf(c), 0);
}

/** Samples the RSS of `pid` and its children every `everyMs` until `stop`, which returns the peak sum (bytes). */
export function sampleTreeRss(pid: number, everyMs = 200): { stop: () => number } {
  let peak = treeRss(pid);
  const timer = setInterval(() => (peak = Math.max(peak, treeRss(pid))), everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(peak, treeRss(pid));
    },
  };
}
