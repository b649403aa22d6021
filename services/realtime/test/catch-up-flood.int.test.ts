/**
 * The resume flood: 80 subscriptions with `resume_from: 0` against a project with
 * 100 MB of change history, on `npm start`'s entry with two workers. Catch-up is bounded work —
 * the index is counted first, pages are bounded, each catch-up and each connection and project
 * has a byte budget, and catch-ups take turns — so every worker keeps answering /healthz, none
 * dies, and none grows by more than 150 MB; every subscription is answered (past its budget with
 * `resync_required` and a snapshot).
 *
 * The history is written straight into the event log file (`events.db`) by the test, as records
 * would have written it: building 100 MB through the API would take minutes.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteEventBus, asProjectId } from '@plinth/shared';
import { freshRequest, startStandalone, stopStandalone, type StandaloneProcess } from '@plinth/testing/standalone-process';
import { RtClient } from './support/rt-client';

const HISTORY_BYTES = 100 * 1024 * 1024;
const BODY_BYTES = 40 * 1024;
const CONNECTIONS = 20;
const SUBS_PER_CONNECTION = 4;

let s: StandaloneProcess;
let dataDir: string;
const clients: RtClient[] = [];
/** The epoch of the log the history was written to (resume positions name it). */
let epoch = '';

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-flood-'));
  s = await startStandalone(dataDir, { PLINTH_WORKERS: '2' });
  const res = await freshRequest(`${s.url}/v1/projects/demo/collections`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${s.secretKey}` },
    body: { name: 'history', fields: { body: { type: 'text' } }, rules: { read: 'true' } },
  });
  expect(res.status).toBe(201);
  // 100 MB of creates and updates of public records, in the subscribed collection itself.
  const bus = new SqliteEventBus({ file: path.join(dataDir, 'records.db') });
  try {
    epoch = await bus.epoch();
    const project = asProjectId('demo');
    const body = 'h'.repeat(BODY_BYTES);
    const now = Date.now();
    const writes: Promise<number>[] = [];
    for (let i = 0; i * BODY_BYTES < HISTORY_BYTES; i++) {
      const record = { id: `rec_${String(i % 500).padStart(26, '0')}`, version: Math.floor(i / 500) + 1, created_at: 'x', updated_at: 'x', body };
      writes.push(bus.publish({ project, collection: 'history', kind: record.version === 1 ? 'create' : 'update', record, committed_at: now }));
    }
    await Promise.all(writes);
  } finally {
    await bus.close();
  }
}, 120_000);

afterAll(async () => {
  for (const c of clients) c.close();
  // SIGKILL: a worker frozen by the flood would not end on SIGTERM.
  if (s) for (const pid of workerPids()) process.kill(pid, 'SIGKILL');
  if (s) await stopStandalone(s, 'SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** The primary's worker processes. */
function workerPids(): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(s.child.pid)], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Resident memory of a process in bytes (0 once it is gone). */
function rss(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

it('80 × subscribe with resume_from 0 over 100 MB of history: /healthz answers within 250 ms throughout, no worker dies, RSS stays within 150 MB', async () => {
  const workers = workerPids();
  expect(workers).toHaveLength(2);
  const idle = new Map(workers.map((pid) => [pid, rss(pid)]));
  const peak = new Map(idle);
  const slowest: number[] = [];
  const failures: string[] = [];
  let watching = true;
  // Every 50 ms: each worker's memory, and /healthz on a fresh connection (the primary hands
  // successive connections to the two workers in turn).
  const watch = (async () => {
    while (watching) {
      for (const pid of workers) peak.set(pid, Math.max(peak.get(pid)!, rss(pid)));
      const started = Date.now();
      try {
        const res = await freshRequest(`${s.url}/healthz`, { timeoutMs: 5000 });
        if (res.status !== 200) failures.push(`healthz ${res.status}`);
      } catch (err) {
        failures.push(`healthz: ${(err as Error).message}`);
      }
      slowest.push(Date.now() - started);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();

  try {
    for (let i = 0; i < CONNECTIONS; i++) clients.push(await RtClient.connect(s.url, 'demo', { queryKey: s.publicKey }));
    for (const [i, c] of clients.entries()) {
      for (let j = 0; j < SUBS_PER_CONNECTION; j++) c.send({ type: 'subscribe', id: `h${i}-${j}`, collection: 'history', resume_from: 0, resume_epoch: epoch });
    }
    // Every subscription is answered: replayed within its budget, or resync_required + snapshot.
    for (const [i, c] of clients.entries()) {
      for (let j = 0; j < SUBS_PER_CONNECTION; j++) {
        const id = `h${i}-${j}`;
        const first = await c.next((m) => (m.type === 'subscribed' || m.type === 'error') && m.id === id, 60_000);
        expect(first.type).toBe('subscribed');
        if (first.resumed !== true) await c.next((m) => m.type === 'snapshot' && m.id === id, 60_000);
      }
    }
  } finally {
    watching = false;
    await watch;
  }
  expect(failures).toEqual([]);
  expect(Math.max(...slowest)).toBeLessThan(250);
  expect(workerPids().sort()).toEqual([...workers].sort());
  for (const pid of workers) expect(peak.get(pid)! - idle.get(pid)!).toBeLessThan(150 * 1024 * 1024);
}, 120_000);
