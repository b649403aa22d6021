import autocannon from 'autocannon';

export interface LoadOptions {
  url: string;
  method?: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  headers?: Record<string, string>;
  body?: string;
  /** Several request shapes to cycle through (e.g. different record ids). */
  requests?: Array<{ path?: string; method?: string; body?: string; headers?: Record<string, string> }>;
  connections?: number;
  durationSeconds?: number;
}

export interface LoadResult {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

/** One autocannon run on loopback; returns requests/s and latency percentiles in ms. */
export async function load(name: string, opts: LoadOptions): Promise<LoadResult> {
  const result = await autocannon({
    url: opts.url,
    method: opts.method ?? 'GET',
    headers: opts.headers,
    body: opts.body,
    requests: opts.requests as autocannon.Request[] | undefined,
    connections: opts.connections ?? 32,
    duration: opts.durationSeconds ?? Number(process.env.BENCH_SECONDS ?? 5),
  });
  return {
    name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

export function formatTable(rows: LoadResult[]): string {
  const head = ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors'];
  const body = rows.map((r) => [r.name, r.rps.toFixed(0), r.p50.toFixed(2), r.p99.toFixed(2), String(r.non2xx), String(r.errors)]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
}

export function ratio(a: LoadResult, b: LoadResult): string {
  return (a.rps / b.rps).toFixed(2);
}
