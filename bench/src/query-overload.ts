import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { runEntry } from './processes';

/**
 * Heavy-query overload (docs/performance.md, "Heavy queries under overload"): one caller's heavy
 * queries at four times the rate the server sustains, while light queries are measured beside
 * them. First the heavy query alone, one in flight per worker (the heavy lane's share of one
 * caller), gives the sustainable rate; then the overload runs, sent at a fixed rate whatever the
 * answers, for BENCH_SECONDS (default 5) with the light loads beside it.
 */

const RECORDS = 160;
const ITEMS = 1000;
/**
 * Every list ends with common-0…common-29, and the order (`rank`, never set) has no index: each
 * of the 160 lists is read 30 times before the rows can be sorted.
 */
const HEAVY_WHERE = JSON.stringify(Array.from({ length: 30 }, (_, j) => ['tags', 'array-contains', `common-${j}`]));

interface Sample {
  status: number;
  ms: number;
  /** The envelope's error code of a non-200 answer. */
  error?: string;
}

async function timedFetch(url: string, headers: Record<string, string>): Promise<Sample> {
  const started = performance.now();
  try {
    const res = await fetch(url, { headers });
    const text = await res.text();
    const ms = performance.now() - started;
    if (res.status === 200) return { status: 200, ms };
    const body = JSON.parse(text) as { error?: string };
    return { status: res.status, ms, error: body.error };
  } catch {
    return { status: 0, ms: performance.now() - started };
  }
}

/** Requests sent at `perSecond` for `seconds` whatever the answers (an open loop, as clients arrive). */
async function openLoop(url: string, headers: Record<string, string>, perSecond: number, seconds: number): Promise<Sample[]> {
  const sent: Array<Promise<Sample>> = [];
  const start = performance.now();
  const total = Math.round(perSecond * seconds);
  while (sent.length < total) {
    const due = start + (sent.length * 1000) / perSecond;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    sent.push(timedFetch(url, headers));
  }
  return Promise.all(sent);
}

/** `connections` clients, each sending its next request when the last is answered, for `seconds`. */
async function closedLoop(url: string, headers: Record<string, string>, connections: number, seconds: number): Promise<Sample[]> {
  const samples: Sample[] = [];
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) samples.push(await timedFetch(url, headers));
    }),
  );
  return samples;
}

function percentile(values: number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * q) - 1)]!;
}

function summary(name: string, samples: Sample[], seconds: number): string[] {
  const ok = samples.filter((s) => s.status === 200);
  const refused = samples.filter((s) => s.error === 'overloaded');
  const timedOut = samples.filter((s) => s.error === 'unavailable');
  const other = samples.length - ok.length - refused.length - timedOut.length;
  const ms = (v: number) => (Number.isNaN(v) ? '-' : v.toFixed(0));
  return [
    name,
    (ok.length / seconds).toFixed(1),
    ms(percentile(ok.map((s) => s.ms), 0.5)),
    ms(percentile(ok.map((s) => s.ms), 0.99)),
    String(refused.length),
    ms(percentile(refused.map((s) => s.ms), 0.99)),
    String(timedOut.length),
    String(other),
  ];
}

function table(rows: string[][]): string {
  const head = ['load', '200/s', 'p50 ms', 'p99 ms', 'overloaded', 'its p99 ms', 'query_timeout', 'other'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

async function post(url: string, key: string, body: object): Promise<{ [k: string]: unknown }> {
  const res = await fetch(url, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`POST ${url} → ${res.status} ${await res.text()}`);
  return (await res.json()) as { [k: string]: unknown };
}

async function overload(workers: number, seconds: number): Promise<string[][]> {
  const label = `×${workers}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-bench-overload-'));
  const adminKey = `adm_${randomBytes(24).toString('hex')}`;
  const standalone = await runEntry('gateway/dist/standalone.js', {
    PLINTH_WORKERS: String(workers),
    PLINTH_DATA_DIR: dataDir,
    PLINTH_ADMIN_KEY: adminKey,
    PLINTH_RATE_LIMIT_PUBLIC_KEY: '1000000000',
    PLINTH_RATE_LIMIT_SECRET_KEY: '1000000000',
  });
  try {
    const project = async (id: string) => ((await post(`${standalone.url}/v1/admin/projects`, adminKey, { id })).keys as { secret: string }).secret;
    const heavyKey = await project('heavy');
    const lightKey = await project('light');
    const heavyBase = `${standalone.url}/v1/projects/heavy/collections`;
    const lightBase = `${standalone.url}/v1/projects/light/collections`;
    await post(heavyBase, heavyKey, { name: 'lists', fields: { tags: { type: 'list' }, rank: { type: 'number' } } });
    for (let i = 0; i < RECORDS; i += 8) {
      await Promise.all(
        Array.from({ length: 8 }, (_, k) => {
          const tags = Array.from({ length: ITEMS }, (_, n) => (n >= ITEMS - 30 ? `common-${n - (ITEMS - 30)}` : `tag-${i + k}-${n}`));
          return post(`${heavyBase}/lists/records`, heavyKey, { data: { tags } });
        }),
      );
    }
    await post(lightBase, lightKey, { name: 'notes', fields: { body: { type: 'text' } } });
    for (let i = 0; i < 20; i++) await post(`${lightBase}/notes/records`, lightKey, { data: { body: `note ${i}` } });

    const heavyUrl = `${heavyBase}/lists/records?where=${encodeURIComponent(HEAVY_WHERE)}&orderBy=rank&limit=10`;
    const heavyAuth = { Authorization: `Bearer ${heavyKey}` };
    // Sustainable: one heavy query in flight per worker (the heavy lane's share of one caller).
    const sustainable = await closedLoop(heavyUrl, heavyAuth, workers, seconds);
    const rate = sustainable.filter((x) => x.status === 200).length / seconds;
    const [heavy, otherProject, sameProject] = await Promise.all([
      openLoop(heavyUrl, heavyAuth, 4 * rate, seconds),
      closedLoop(`${lightBase}/notes/records?limit=5`, { Authorization: `Bearer ${lightKey}` }, 4, seconds),
      closedLoop(`${heavyBase}/lists/records?limit=2`, heavyAuth, 4, seconds),
    ]);
    return [
      summary(`${label}: heavy alone (${workers} in flight)`, sustainable, seconds),
      summary(`${label}: heavy at 4× that (${(4 * rate).toFixed(0)}/s sent)`, heavy, seconds),
      summary(`${label}: other project's list (4 in flight)`, otherProject, seconds),
      summary(`${label}: same caller's cheap list (4 in flight)`, sameProject, seconds),
    ];
  } finally {
    await standalone.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Heavy queries of one caller at four times the sustainable rate, through the
 * standalone gateway with one worker and with two: the heavy queries' goodput against the
 * sustainable rate, how fast the excess is refused, and the light queries' p99 beside them.
 */
export async function benchQueryOverload(): Promise<string> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  const rows = [...(await overload(1, seconds)), ...(await overload(2, seconds))];
  const rate = (prefix: string) => Number(rows.find((r) => r[0]!.startsWith(prefix))![1]);
  const goodput = (w: number) => ((100 * rate(`×${w}: heavy at 4×`)) / rate(`×${w}: heavy alone`)).toFixed(0);
  return [
    '## Heavy queries under overload (one caller; standalone)',
    '',
    table(rows),
    '',
    `heavy goodput at overload / sustainable: ×1 ${goodput(1)} %   ×2 ${goodput(2)} %`,
    'targets: light p99 ≤ 250 ms; the excess refused (503 overloaded + Retry-After) within 50 ms; goodput ≥ 90 %',
  ].join('\n');
}
