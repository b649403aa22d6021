import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePort } from '@plinth/testing/free-port';

export interface BenchProcess {
  url: string;
  stop(): Promise<void>;
}

/**
 * Runs a compiled entry point (relative to the repository root) as its own process, so the load
 * generator never shares an event loop with the server, and waits until `probe` answers 2xx/4xx.
 */
export async function runEntry(entry: string, env: NodeJS.ProcessEnv, probe = '/healthz'): Promise<BenchProcess & { child: ChildProcess; output: () => string }> {
  const port = await freePort();
  // BENCH_SERVER_ROOT: run the entry of another checkout (built), e.g. to compare two versions with one load generator.
  const root = process.env.BENCH_SERVER_ROOT ?? path.resolve(__dirname, '../..');
  // BENCH_SERVER_NODE_ARGS: node flags for the process under test (e.g. `--cpu-prof --cpu-prof-dir=…`; cluster workers inherit them).
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, path.join(root, entry)], {
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

/** Resident memory of one process (Linux /proc), in bytes; 0 once it is gone. */
interface Memory {
  /** Resident set size: every page the process has in memory, shared ones included. */
  rss: number;
  /**
   * Proportional set size: shared pages (the node binary, libraries, files) divided among the
   * processes that share them, so the sum over processes counts each page once.
   */
  pss: number;
}

function memoryOf(pid: number): Memory {
  try {
    const text = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) * 1024;
    return { rss: kb('Rss'), pss: kb('Pss') };
  } catch {
    return { rss: 0, pss: 0 };
  }
}

/** The process and its direct children (standalone's primary and workers), summed. */
function treeMemory(pid: number): Memory {
  let children: number[] = [];
  try {
    children = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    // no such process
  }
  return [pid, ...children].map(memoryOf).reduce((a, b) => ({ rss: a.rss + b.rss, pss: a.pss + b.pss }), { rss: 0, pss: 0 });
}

/**
 * Samples the memory of `pid` and its children every `everyMs` until `stop`, which returns the
 * peak sums (bytes): of RSS (shared pages counted once per process) and of PSS (counted once).
 */
export function sampleTreeMemory(pid: number, everyMs = 200): { stop: () => Memory } {
  const peak: Memory = { rss: 0, pss: 0 };
  const sample = () => {
    const now = treeMemory(pid);
    peak.rss = Math.max(peak.rss, now.rss);
    peak.pss = Math.max(peak.pss, now.pss);
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      return { ...peak };
    },
  };
}
