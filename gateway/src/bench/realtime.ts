import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { WebSocket } from 'ws';
import autocannon from 'autocannon';
import { runEntry, type BenchProcess } from './processes';

/**
 * Realtime benchmarks, against the standalone server as its own process (the load generator —
 * this process — holds every WebSocket and competes with the server for the 2 cores; its own CPU
 * is reported):
 * (1) 1,000 connections on one shared query, a writer at 20 creates/s: delivery latency, from the
 *     create request being sent to the event arriving (includes the create's own latency);
 * (2) the same at the highest create rate the server sustains: events delivered per second, and
 *     REST create latency while it runs, against the idle figure; then (2b) creates paced at
 *     rising rates: the highest rate (and its events/s) at which a create's p50 stays ≤ 2× idle;
 * (3) 1,000 connections of 1,000 signed-up users on an owner-only collection, writes for random
 *     owners at 20/s: latency, and whether anything was misdelivered;
 * (4) server RSS per 1,000 idle subscribed connections (every process of the server, summed).
 * BENCH_RT_CONNECTIONS (default 1000) and BENCH_SECONDS (default 5) scale it; BENCH_RT_WORKERS
 * (default 1) runs the server with that many worker processes, so connections spread over them
 * and an event written on one worker reaches subscribers on the others.
 */

const N = Number(process.env.BENCH_RT_CONNECTIONS ?? 1000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const WORKERS = Math.max(1, Number(process.env.BENCH_RT_WORKERS ?? 1));

interface Ctx {
  url: string;
  project: string;
  pk: string;
  sk: string;
}

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** RSS of `pid` and of every process under it (the standalone server's workers), in MB. */
function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  let total = m ? Number(m[1]) / 1024 : NaN;
  for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
    const children = fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
    for (const child of children ? children.split(/\s+/) : []) total += rssMb(Number(child));
  }
  return total;
}

async function api(ctx: Ctx, method: string, p: string, key: string, body?: unknown, token?: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${ctx.url}/v1/projects/${ctx.project}${p}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', ...(token ? { 'X-Db-User-Token': token } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** Opens `n` connections, each subscribed (after an optional auth); `onEvent` sees every event. */
async function subscribeMany(
  ctx: Ctx,
  n: number,
  collection: string,
  tokens: (string | null)[],
  onEvent: (conn: number, record: { id: string; owner?: string; title?: string }, at: number) => void,
): Promise<WebSocket[]> {
  const sockets: WebSocket[] = [];
  const batch = 50;
  for (let start = 0; start < n; start += batch) {
    await Promise.all(
      Array.from({ length: Math.min(batch, n - start) }, async (_, k) => {
        const i = start + k;
        const ws = new WebSocket(`${ctx.url.replace('http', 'ws')}/v1/projects/${ctx.project}/realtime?key=${ctx.pk}`);
        sockets.push(ws);
        await new Promise<void>((resolve, reject) => {
          ws.on('message', (data) => {
            const msg = JSON.parse(data.toString()) as { type: string; events?: { record: { id: string; owner?: string; title?: string } }[] };
            if (msg.type === 'subscribed') resolve();
            else if (msg.type === 'error') reject(new Error(JSON.stringify(msg)));
            else if (msg.type === 'events') {
              const at = performance.now();
              for (const e of msg.events!) onEvent(i, e.record, at);
            }
          });
          ws.once('open', () => {
            if (tokens[i]) ws.send(JSON.stringify({ type: 'auth', token: tokens[i] }));
            ws.send(JSON.stringify({ type: 'subscribe', id: 's', collection }));
          });
          ws.once('error', reject);
        });
      }),
    );
  }
  return sockets;
}

/**
 * Creates records at `perSecond` for `seconds`, each titled with a unique marker; `sent` gets each
 * marker's send time before the request goes out, `latencies` (when given) each create's answer
 * time in ms. Resolves with the number of creates.
 */
async function writeAt(
  ctx: Ctx,
  collection: string,
  perSecond: number,
  seconds: number,
  sent: Map<string, number>,
  data: () => Record<string, unknown>,
  latencies?: number[],
): Promise<number> {
  const total = perSecond * seconds;
  const start = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / perSecond;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const marker = `m${collection}${i}`;
    const t0 = performance.now();
    sent.set(marker, t0);
    pending.push(
      api(ctx, 'POST', `/collections/${collection}/records`, ctx.sk, { data: { ...data(), title: marker } }).then((r) => {
        if (r.status !== 201) throw new Error(`create: ${r.status}`);
        latencies?.push(performance.now() - t0);
      }),
    );
  }
  await Promise.all(pending);
  await new Promise((r) => setTimeout(r, 500));
  return total;
}

async function createCollection(ctx: Ctx, name: string, read: string): Promise<void> {
  const r = await api(ctx, 'POST', '/collections', ctx.sk, { name, fields: { owner: { type: 'text', indexed: true }, title: { type: 'text' } }, rules: { read } });
  if (r.status !== 201) throw new Error(`collection: ${JSON.stringify(r.body)}`);
}

function closeAll(sockets: WebSocket[]): void {
  for (const ws of sockets) ws.terminate();
}

/**
 * REST create throughput and latency. autocannon's percentiles are whole milliseconds (an idle
 * create's p50 reads 0), so `mean`, which is not rounded, is what two runs are compared by.
 */
async function createLatency(ctx: Ctx, collection: string, connections: number): Promise<{ rps: number; p50: number; p99: number; mean: number }> {
  const r = await autocannon({
    url: `${ctx.url}/v1/projects/${ctx.project}/collections/${collection}/records`,
    method: 'POST',
    connections,
    duration: SECONDS,
    headers: { Authorization: `Bearer ${ctx.sk}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ data: { title: 'load', owner: 'x' } }),
  });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, mean: r.latency.mean };
}

export async function benchRealtime(): Promise<string> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-bench-rt-'));
  const adminKey = `adm_${randomBytes(24).toString('hex')}`;
  let server: (BenchProcess & { child: import('node:child_process').ChildProcess }) | null = null;
  const lines: string[] = [];
  try {
    server = await runEntry('gateway/dist/standalone.js', {
      // One process by default: the connections all share one hub.
      PLINTH_WORKERS: String(WORKERS),
      PLINTH_DATA_DIR: dataDir,
      PLINTH_ADMIN_KEY: adminKey,
      PLINTH_BCRYPT_COST: '4',
      PLINTH_RATE_LIMIT_IP: '1000000',
      PLINTH_RATE_LIMIT_EMAIL: '1000000',
      REALTIME_MAX_CONNECTIONS_PER_PROJECT: String(N * 2),
      // Every bench connection comes from the loopback address, with the public key.
      REALTIME_MAX_PUBLIC_CONNECTIONS_PER_PROJECT: String(N * 2),
      REALTIME_MAX_CONNECTIONS_PER_ADDRESS: String(N * 2),
    });
    const created = await (
      await fetch(`${server.url}/v1/admin/projects`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ id: 'rtbench' }),
      })
    ).json() as { keys: { public: string; secret: string } };
    const ctx: Ctx = { url: server.url, project: 'rtbench', pk: created.keys.public, sk: created.keys.secret };
    await api(ctx, 'PATCH', '/settings/auth', ctx.sk, { enabled: true });
    await createCollection(ctx, 'shared', 'true');
    await createCollection(ctx, 'owned', 'auth != null && record.owner == auth.uid');
    const pid = server.child.pid!;

    // (4) and (1): one shared query.
    const idle = await createLatency(ctx, 'shared', 4);
    const idlePaced: number[] = [];
    await writeAt(ctx, 'shared', 25, 2, new Map(), () => ({ owner: 'x' }), idlePaced);
    idlePaced.sort((a, b) => a - b);
    const rssBefore = rssMb(pid);
    const lat: number[] = [];
    const sentAt = new Map<string, number>();
    let delivered = 0;
    const sockets = await subscribeMany(ctx, N, 'shared', [], (_c, record, at) => {
      delivered++;
      const t0 = sentAt.get(record.title ?? '');
      if (t0 !== undefined) lat.push(at - t0);
    });
    await new Promise((r) => setTimeout(r, 1000));
    const rssAfter = rssMb(pid);
    const cpu0 = process.cpuUsage();
    const wall0 = performance.now();
    const sent = await writeAt(ctx, 'shared', 20, SECONDS, sentAt, () => ({ owner: 'x' }));
    const cpu1 = process.cpuUsage(cpu0);
    const genCpu1 = ((cpu1.user + cpu1.system) / 1000 / (performance.now() - wall0)) * 100;
    lat.sort((a, b) => a - b);
    lines.push(
      `(1) ${N} connections, one shared query, 20 creates/s for ${SECONDS} s: delivery latency p50 ${pct(lat, 50).toFixed(1)} ms, p99 ${pct(lat, 99).toFixed(1)} ms ` +
        `(${lat.length} of ${sent * N} deliveries timed); load generator CPU ${genCpu1.toFixed(0)} % of one core`,
    );
    lines.push(`(4) server RSS: ${rssBefore.toFixed(1)} MB idle → ${rssAfter.toFixed(1)} MB with ${N} subscribed connections = ${(((rssAfter - rssBefore) * 1000) / N).toFixed(1)} MB per 1,000`);

    // (2): saturation — creates as fast as 8 connections can push them.
    delivered = 0;
    const cpu2a = process.cpuUsage();
    const w2 = performance.now();
    const busy = await createLatency(ctx, 'shared', 8);
    await new Promise((r) => setTimeout(r, 1000));
    const elapsed = (performance.now() - w2) / 1000;
    const cpu2 = process.cpuUsage(cpu2a);
    const genCpu2 = ((cpu2.user + cpu2.system) / 1000 / (performance.now() - w2)) * 100;
    lines.push(
      `(2) saturation: ${busy.rps.toFixed(0)} creates/s → ${(delivered / elapsed).toFixed(0)} events delivered/s to ${N} connections; ` +
        `REST create p50 ${busy.p50.toFixed(0)} ms, p99 ${busy.p99.toFixed(0)} ms, mean ${busy.mean.toFixed(2)} ms ` +
        `(idle: p50 ${idle.p50.toFixed(0)} ms, mean ${idle.mean.toFixed(2)} ms; mean ${(busy.mean / idle.mean).toFixed(1)}× idle); ` +
        `load generator CPU ${genCpu2.toFixed(0)} %`,
    );

    // (2b): paced creates at rising rates, while the same connections listen.
    const idleP50 = pct(idlePaced, 50);
    let best = '';
    const steps: string[] = [];
    for (const rate of [25, 50, 100, 200, 400, 800]) {
      const took: number[] = [];
      delivered = 0;
      const w = performance.now();
      await writeAt(ctx, 'shared', rate, 2, new Map(), () => ({ owner: 'x' }), took);
      const perSecond = delivered / ((performance.now() - w) / 1000);
      took.sort((a, b) => a - b);
      const p50 = pct(took, 50);
      steps.push(`${rate}/s: create p50 ${p50.toFixed(1)} ms, ${perSecond.toFixed(0)} events/s`);
      if (p50 > 2 * idleP50) break;
      best = `${rate} creates/s → ${perSecond.toFixed(0)} events delivered/s with create p50 ${p50.toFixed(1)} ms`;
    }
    lines.push(
      `(2b) paced, target create p50 ≤ 2× idle (${idleP50.toFixed(1)} ms paced at 25/s without subscribers): ` +
        `${best ? `met up to ${best}` : 'not met at 25/s'}; steps: ${steps.join('; ')}`,
    );
    closeAll(sockets);

    // (3): N signed-up users, owner-only.
    const users: { id: string; token: string }[] = [];
    for (let start = 0; start < N; start += 25) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(25, N - start) }, async (_, k) => {
          const r = await fetch(`${ctx.url}/v1/projects/${ctx.project}/auth/signup`, {
            method: 'POST',
            headers: { Authorization: `Bearer ${ctx.pk}`, 'Content-Type': 'application/json' },
            body: JSON.stringify({ email: `u${start + k}@bench.example.com`, password: 'bench password 1' }),
          });
          const b = (await r.json()) as { user: { id: string }; access_token: string };
          return { id: b.user.id as string, token: b.access_token as string };
        }),
      );
      users.push(...batch);
    }
    const lat3: number[] = [];
    let misdelivered = 0;
    const sent3 = new Map<string, number>();
    const owned = await subscribeMany(
      ctx,
      N,
      'owned',
      users.map((u) => u.token),
      (conn, record, at) => {
        if (record.owner !== users[conn]!.id) misdelivered++;
        const t0 = sent3.get(record.title ?? '');
        if (t0 !== undefined) lat3.push(at - t0);
      },
    );
    const cpu3a = process.cpuUsage();
    const w3 = performance.now();
    const s3 = await writeAt(ctx, 'owned', 20, SECONDS, sent3, () => ({ owner: users[Math.floor(Math.random() * N)]!.id }));
    const cpu3 = process.cpuUsage(cpu3a);
    const genCpu3 = ((cpu3.user + cpu3.system) / 1000 / (performance.now() - w3)) * 100;
    lat3.sort((a, b) => a - b);
    lines.push(
      `(3) ${N} users, owner-only, 20 creates/s for random owners: latency p50 ${pct(lat3, 50).toFixed(1)} ms, p99 ${pct(lat3, 99).toFixed(1)} ms ` +
        `(${lat3.length} of ${s3} timed); misdelivered: ${misdelivered}; load generator CPU ${genCpu3.toFixed(0)} %`,
    );
    closeAll(owned);
    const topology = WORKERS === 1 ? 'one process' : `${WORKERS} worker processes`;
    return [`## realtime (standalone, ${topology}; load generator in another)`, ...lines].join('\n');
  } finally {
    await server?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
