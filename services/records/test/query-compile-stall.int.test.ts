/**
 * The largest query a client may send — 30 conditions, 29 of them `array-contains-any` with up
 * to 100 values each, one pinning an id — costs the server little to compile: while such
 * subscribes (with a snapshot, so each runs its query) keep arriving, each a new query shape,
 * /healthz of the same worker answers within 50 ms (95th percentile). SQLite prepared the old
 * SQL (one OR term per value) in 70–120 ms on the thread that ran it, and a query pinned to an
 * id ran on the worker's event loop.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freshRequest, startStandalone, stopStandalone, type StandaloneProcess } from '@plinth/testing/standalone-process';

/** Subscribes are sent one after another for this long, /healthz probed every 10 ms meanwhile. */
const DURATION_MS = 3000;
const HEALTHZ_MS = 50;

let s: StandaloneProcess;
let dataDir: string;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-compile-stall-'));
  s = await startStandalone(dataDir, { PLINTH_RATE_LIMIT_SECRET_KEY: '1000000' });
  const sk = { Authorization: `Bearer ${s.secretKey}` };
  const created = await freshRequest(`${s.url}/v1/projects/demo/collections`, { method: 'POST', headers: sk, body: { name: 'tagged', fields: { tags: { type: 'list' } } } });
  expect(created.status).toBe(201);
  for (let i = 0; i < 20; i++) {
    const tags = Array.from({ length: 50 }, (_, k) => `t${i}-${k}`);
    expect((await freshRequest(`${s.url}/v1/projects/demo/collections/tagged/records`, { method: 'POST', headers: sk, body: { data: { tags } } })).status).toBe(201);
  }
  // The worker's reader threads start at its first query, not during the measurement.
  expect((await freshRequest(`${s.url}/v1/projects/demo/collections/tagged/records?limit=1`, { headers: sk })).status).toBe(200);
}, 60_000);

afterAll(async () => {
  if (s) await stopStandalone(s);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/**
 * Subscribe `k`: one id (a query pinned to an id runs on the event loop, where its SQL is
 * prepared), then 29 × array-contains-any of 96–100 values: a query shape of its own.
 */
function where(k: number): unknown[] {
  const lists = Array.from({ length: 29 }, (_, j) => ['tags', 'array-contains-any', Array.from({ length: 100 - ((j + k) % 5) }, (_, v) => `x${k}-${j}-${v}`)]);
  return [['id', '==', `rec_${k}`], ...lists];
}

/**
 * The 95th percentile (nearest rank). The test machine's cores may be shared with other suites,
 * which by themselves stall a probe now and then: the bound is 50 ms over the idle p95. Before
 * the fix the worker's event loop was held so long that 3 s gave room for 12 probes in all.
 */
function p95(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil(sorted.length * 0.95) - 1]!;
}

/** /healthz probed every 10 ms while `more()`: the latencies. */
async function probeHealthz(more: () => boolean): Promise<number[]> {
  const healthz: number[] = [];
  while (more()) {
    const started = performance.now();
    expect((await freshRequest(`${s.url}/healthz`)).status).toBe(200);
    healthz.push(performance.now() - started);
    await new Promise((r) => setTimeout(r, 10));
  }
  return healthz;
}

it('30 × array-contains-any of 100 values, one subscribe after another for 3 s: /healthz answers within 50 ms (p95) throughout', async () => {
  const idleUntil = Date.now() + 1000;
  // What /healthz takes on this machine with nothing else sent: the bound is 50 ms on top of it.
  const idle = await probeHealthz(() => Date.now() < idleUntil);
  const statuses: number[] = [];
  const until = Date.now() + DURATION_MS;
  const subscriber = (async () => {
    for (let k = 0; Date.now() < until; k++) {
      const res = await freshRequest(`${s.url}/v1/projects/demo/collections/tagged/subscribe`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${s.secretKey}` },
        body: { where: where(k), snapshot: true },
      });
      statuses.push(res.status);
    }
  })();
  const healthz = await probeHealthz(() => Date.now() < until);
  await subscriber;

  expect(Math.round(p95(healthz) - p95(idle))).toBeLessThanOrEqual(HEALTHZ_MS);
  expect(healthz.length).toBeGreaterThan(20);
  expect(statuses.length).toBeGreaterThan(10);
  expect(statuses).toEqual(Array(statuses.length).fill(200));
}, 60_000);
