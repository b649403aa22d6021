import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import bcrypt from 'bcrypt';
import type autocannon from 'autocannon';
import { formatTable, load, type LoadOptions, type LoadResult } from './load';
import { runEntry } from './processes';

const PASSWORD = 'bench password 123';

/** bcrypt hashes per second at `cost`, on this thread, for about `ms`. */
function bcryptRate(cost: number, ms = 2000): number {
  const start = performance.now();
  let n = 0;
  while (performance.now() - start < ms) {
    bcrypt.hashSync(PASSWORD, cost);
    n++;
  }
  return n / ((performance.now() - start) / 1000);
}

async function call(url: string, key: string, method: string, body: object): Promise<{ [k: string]: unknown }> {
  const res = await fetch(url, {
    method,
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${url} → ${res.status} ${await res.text()}`);
  return (await res.json()) as { [k: string]: unknown };
}

/** bcrypt compares per second at `cost` with `parallel` in flight (libuv's thread pool: every core), for about `ms`. */
async function bcryptPoolRate(cost: number, parallel: number, ms = 3000): Promise<number> {
  const hash = bcrypt.hashSync(PASSWORD, cost);
  const start = performance.now();
  let n = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (performance.now() - start < ms) {
        await bcrypt.compare(PASSWORD, hash);
        n++;
      }
    }),
  );
  return n / ((performance.now() - start) / 1000);
}

/** Sign-in and refresh through one standalone server with `workers` processes. */
async function authLoads(workers: number): Promise<LoadResult[]> {
  const label = `standalone ×${workers}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-bench-auth-'));
  const adminKey = `adm_${randomBytes(24).toString('hex')}`;
  const standalone = await runEntry('gateway/dist/standalone.js', {
    PLINTH_WORKERS: String(workers),
    PLINTH_DATA_DIR: dataDir,
    PLINTH_ADMIN_KEY: adminKey,
    PLINTH_RATE_LIMIT_IP: '1000000000',
    PLINTH_RATE_LIMIT_EMAIL: '1000000000',
  });
  const rows: LoadResult[] = [];
  try {
    const base = `${standalone.url}/v1/projects/bench`;
    const created = await fetch(`${standalone.url}/v1/admin/projects`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ id: 'bench' }),
    });
    const { keys } = (await created.json()) as { keys: { public: string; secret: string } };
    await call(`${base}/settings/auth`, keys.secret, 'PATCH', { enabled: true, send_verification_on_signup: false });
    await call(`${base}/auth/signup`, keys.public, 'POST', { email: 'bench@example.com', password: PASSWORD });
    const headers = { Authorization: `Bearer ${keys.public}`, 'Content-Type': 'application/json' };

    // One client per hashing thread keeps every thread busy (a worker holding more connections
    // queues at most as many as it has threads, which the pool always admits); more clients would
    // only queue, and past the wait bound the pool refuses them (the overload bench).
    const threads = workers * Math.max(2, Math.ceil(4 / workers));
    rows.push(
      await load(`${label}: sign-in (bcrypt cost 10)`, {
        connections: threads,
        url: `${base}/auth/signin`,
        method: 'POST',
        headers,
        body: JSON.stringify({ email: 'bench@example.com', password: PASSWORD }),
      }),
    );

    const connections = 32;
    const pool: string[] = [];
    for (let i = 0; i < connections * 2; i++) {
      const s = await call(`${base}/auth/signin`, keys.public, 'POST', { email: 'bench@example.com', password: PASSWORD });
      pool.push(String(s.refresh_token));
    }
    const chained: autocannon.Request[] = [
      {
        method: 'POST',
        path: '/v1/projects/bench/auth/refresh',
        headers,
        // autocannon resets per-request context, so live tokens circulate through one pool:
        // each is taken by exactly one in-flight request and its successor put back.
        setupRequest: (req) => ({ ...req, body: JSON.stringify({ refresh_token: pool.shift() ?? 'frt_pool-empty' }) }),
        onResponse: (status, body) => {
          if (status === 200) pool.push((JSON.parse(body) as { refresh_token: string }).refresh_token);
        },
      },
    ];
    rows.push(await load(`${label}: refresh (rotation)`, { url: standalone.url, connections, requests: chained as LoadOptions['requests'] }));
  } finally {
    await standalone.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return rows;
}

/**
 * Auth throughput through the standalone gateway with one worker and with one per core:
 * sign-in (dominated by one bcrypt compare at the default cost 10) and refresh (rotation: every
 * request presents a live refresh token and returns its successor to the pool), beside the raw
 * bcrypt rates that bound sign-in — one thread, and every core through libuv's thread pool.
 */
export async function benchAuthFlows(): Promise<string> {
  const workers = Number(process.env.BENCH_WORKERS ?? os.availableParallelism());
  const oneThread = [4, 10].map((cost) => `bcrypt cost ${cost}: ${bcryptRate(cost).toFixed(0)} hashes/s (one thread)`);
  // The ceiling drifts with the machine by several per cent over a minute: measured before and
  // after the loads, and the mean taken.
  const before = await bcryptPoolRate(10, 8);
  const rows = [...(await authLoads(1)), ...(await authLoads(workers))];
  const ceiling = (before + (await bcryptPoolRate(10, 8))) / 2;
  const signIn = (w: number) => rows.find((r) => r.name === `standalone ×${w}: sign-in (bcrypt cost 10)`)!;
  return [
    '## Auth through the standalone gateway',
    '',
    formatTable(rows),
    '',
    ...oneThread,
    `bcrypt cost 10 compares, 8 in flight on libuv's pool (the machine's ceiling; mean of before and after the loads): ${ceiling.toFixed(1)}/s`,
    `sign-in / ceiling: ×1 ${((100 * signIn(1).rps) / ceiling).toFixed(0)} %   ×${workers} ${((100 * signIn(workers).rps) / ceiling).toFixed(0)} %`,
  ].join('\n');
}
