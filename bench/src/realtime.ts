import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { runEntry, type BenchProcess } from './processes';
import { benchClockMs } from './realtime-clock';
import { Receivers } from './realtime-receivers';

/**
 * Realtime benchmarks, against the standalone server as its own process. The load generator is
 * a writer (this process: REST creates, each record titled with its send time) and
 * BENCH_RT_RECEIVERS (default 4) receiving processes that share the WebSocket connections out
 * and time their own receipts (realtime-receivers.ts), so no single event loop receives the 1,000
 * frames of an event one after the other. Every process of the generator reports its CPU, and
 * so does the server's process tree:
 * (1) 1,000 connections on one shared query, a writer at 20 creates/s: delivery latency, from the
 *     create request being sent to the event arriving (includes the create's own latency), and
 *     the fan-out alone, from the record's created_at to the event arriving;
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
const RECEIVERS = Math.max(1, Number(process.env.BENCH_RT_RECEIVERS ?? 4));
/** BENCH_RT_PARTS=1 runs (1) and (4) only (quicker repeats of the fan-out); default all. */
const PARTS = new Set((process.env.BENCH_RT_PARTS ?? '1,2,3').split(','));

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

/** CPU time (ms) of `pid` and of every process under it (the standalone server's workers). */
function treeCpuMs(pid: number): number {
  let total = 0;
  try {
    // Fields after the command name: utime and stime are the 12th and 13th (clock ticks, 100/s).
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    total = ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
    for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
      const children = fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      for (const child of children ? children.split(/\s+/) : []) total += treeCpuMs(Number(child));
    }
  } catch {
    // gone
  }
  return total;
}

/** CPU used meanwhile, in % of one core: this process (the writer) and the server's process tree. */
function cpuMeter(serverPid: number): () => { writer: number; server: number; serverMs: number } {
  const wall0 = benchClockMs();
  const own0 = process.cpuUsage();
  const server0 = treeCpuMs(serverPid);
  return () => {
    const wall = benchClockMs() - wall0;
    const own = process.cpuUsage(own0);
    const serverMs = treeCpuMs(serverPid) - server0;
    return { writer: ((own.user + own.system) / 1000 / wall) * 100, server: (serverMs / wall) * 100, serverMs };
  };
}

function generatorCpu(writer: number, receivers: number[]): string {
  const sum = receivers.reduce((a, b) => a + b, 0);
  return `load generator CPU: writer ${writer.toFixed(0)} %, ${receivers.length} receivers ${sum.toFixed(0)} % in all (busiest ${Math.max(...receivers).toFixed(0)} %) of one core`;
}

/**
 * Creates records at `perSecond` for `seconds`, each titled with its send time (`t<ms>` on the
 * bench clock, taken just before the request goes out: the receivers time against it);
 * `latencies` (when given) gets each create's answer time in ms. Resolves with the number of
 * creates.
 */
async function writeAt(
  ctx: Ctx,
  collection: string,
  perSecond: number,
  seconds: number,
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
    const t0 = benchClockMs();
    pending.push(
      api(ctx, 'POST', `/collections/${collection}/records`, ctx.sk, { data: { ...data(), title: `t${t0.toFixed(3)}` } }).then((r) => {
        if (r.status !== 201) throw new Error(`create: ${r.status}`);
        latencies?.push(benchClockMs() - t0);
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

function done(lines: string[]): string {
  const topology = WORKERS === 1 ? 'one process' : `${WORKERS} worker processes`;
  return [`## realtime (standalone, ${topology}; load generator: a writer and ${RECEIVERS} receiving processes)`, ...lines].join('\n');
}

export async function benchRealtime(): Promise<string> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-bench-rt-'));
  const adminKey = `adm_${randomBytes(24).toString('hex')}`;
  let server: (BenchProcess & { child: import('node:child_process').ChildProcess }) | null = null;
  let receivers: Receivers | null = null;
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
    receivers = new Receivers(RECEIVERS);
    const target = { url: ctx.url, project: ctx.project, pk: ctx.pk };

    // (4) and (1): one shared query.
    const idle = await createLatency(ctx, 'shared', 4);
    const idlePaced: number[] = [];
    await writeAt(ctx, 'shared', 25, 2, () => ({ owner: 'x' }), idlePaced);
    idlePaced.sort((a, b) => a - b);
    const rssBefore = rssMb(pid);
    await receivers.open({ ...target, collection: 'shared' }, Array.from({ length: N }, () => ({ token: null, owner: null })));
    await new Promise((r) => setTimeout(r, 1000));
    const rssAfter = rssMb(pid);
    await receivers.reset(true);
    const meter1 = cpuMeter(pid);
    const took1: number[] = [];
    const sent = await writeAt(ctx, 'shared', 20, SECONDS, () => ({ owner: 'x' }), took1);
    took1.sort((a, b) => a - b);
    // CPU is counted until every delivery has arrived (a backlog on a busy machine included).
    await receivers.drained(sent * N);
    const cpu1 = meter1();
    const r1 = await receivers.report();
    const lat = r1.latencies.sort((a, b) => a - b);
    const fan = r1.fromCommit.sort((a, b) => a - b);
    lines.push(
      `(1) ${N} connections, one shared query, 20 creates/s for ${SECONDS} s: delivery latency p50 ${pct(lat, 50).toFixed(1)} ms, p99 ${pct(lat, 99).toFixed(1)} ms ` +
        `(fan-out, from the record's created_at to arrival: p50 ${pct(fan, 50).toFixed(0)} ms, p99 ${pct(fan, 99).toFixed(0)} ms, max ${pct(fan, 100).toFixed(0)} ms) ` +
        `(${lat.length} of ${sent * N} deliveries timed; the creates' own answers p50 ${pct(took1, 50).toFixed(1)} ms, p99 ${pct(took1, 99).toFixed(1)} ms); server CPU ${cpu1.server.toFixed(0)} % of one core, ` +
        `${((cpu1.serverMs * 1000) / Math.max(1, r1.delivered)).toFixed(1)} µs per delivery (receivers ${((r1.cpuMs * 1000) / Math.max(1, r1.delivered)).toFixed(1)} µs); ` +
        `${generatorCpu(cpu1.writer, r1.cpuPercent)}`,
    );
    lines.push(`(4) server RSS: ${rssBefore.toFixed(1)} MB idle → ${rssAfter.toFixed(1)} MB with ${N} subscribed connections = ${(((rssAfter - rssBefore) * 1000) / N).toFixed(1)} MB per 1,000`);

    if (!PARTS.has('2') && !PARTS.has('3')) return done(lines);

    // (2): saturation — creates as fast as 8 connections can push them.
    await receivers.reset(false);
    const meter2 = cpuMeter(pid);
    const w2 = benchClockMs();
    const busy = await createLatency(ctx, 'shared', 8);
    await new Promise((r) => setTimeout(r, 1000));
    const elapsed = (benchClockMs() - w2) / 1000;
    const cpu2 = meter2();
    const r2 = await receivers.report();
    lines.push(
      `(2) saturation: ${busy.rps.toFixed(0)} creates/s → ${(r2.delivered / elapsed).toFixed(0)} events delivered/s to ${N} connections; ` +
        `REST create p50 ${busy.p50.toFixed(0)} ms, p99 ${busy.p99.toFixed(0)} ms, mean ${busy.mean.toFixed(2)} ms ` +
        `(idle: p50 ${idle.p50.toFixed(0)} ms, mean ${idle.mean.toFixed(2)} ms; mean ${(busy.mean / idle.mean).toFixed(1)}× idle); ` +
        `server CPU ${cpu2.server.toFixed(0)} %; ${generatorCpu(cpu2.writer, r2.cpuPercent)}`,
    );

    // (2b): paced creates at rising rates, while the same connections listen.
    const idleP50 = pct(idlePaced, 50);
    let best = '';
    const steps: string[] = [];
    for (const rate of [25, 50, 100, 200, 400, 800]) {
      const took: number[] = [];
      await receivers.reset(false);
      const w = benchClockMs();
      await writeAt(ctx, 'shared', rate, 2, () => ({ owner: 'x' }), took);
      const perSecond = (await receivers.report()).delivered / ((benchClockMs() - w) / 1000);
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
    await receivers.closeConnections();

    // (3): N signed-up users, owner-only.
    const users: { id: string; token: string }[] = [];
    for (let start = 0; start < N; start += 25) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(25, N - start) }, async (_, k) => {
          // On a busy machine the password-hashing queue may be full: wait as told, then again.
          for (;;) {
            const r = await fetch(`${ctx.url}/v1/projects/${ctx.project}/auth/signup`, {
              method: 'POST',
              headers: { Authorization: `Bearer ${ctx.pk}`, 'Content-Type': 'application/json' },
              body: JSON.stringify({ email: `u${start + k}@bench.example.com`, password: 'bench password 1' }),
            });
            const b = (await r.json()) as { user: { id: string }; access_token: string };
            if (r.status === 503) {
              await new Promise((resolve) => setTimeout(resolve, 1000));
              continue;
            }
            if (r.status !== 201 && r.status !== 200) throw new Error(`signup: ${r.status} ${JSON.stringify(b)}`);
            return { id: b.user.id, token: b.access_token };
          }
        }),
      );
      users.push(...batch);
    }
    await receivers.open({ ...target, collection: 'owned' }, users.map((u) => ({ token: u.token, owner: u.id })));
    await receivers.reset(true);
    const meter3 = cpuMeter(pid);
    const s3 = await writeAt(ctx, 'owned', 20, SECONDS, () => ({ owner: users[Math.floor(Math.random() * N)]!.id }));
    const cpu3 = meter3();
    const r3 = await receivers.report();
    const lat3 = r3.latencies.sort((a, b) => a - b);
    lines.push(
      `(3) ${N} users, owner-only, 20 creates/s for random owners: latency p50 ${pct(lat3, 50).toFixed(1)} ms, p99 ${pct(lat3, 99).toFixed(1)} ms ` +
        `(${lat3.length} of ${s3} timed); misdelivered: ${r3.misdelivered}; server CPU ${cpu3.server.toFixed(0)} %; ${generatorCpu(cpu3.writer, r3.cpuPercent)}`,
    );
    await receivers.closeConnections();
    return done(lines);
  } finally {
    receivers?.stop();
    await server?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
