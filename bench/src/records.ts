import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { asProjectId, newId, openSqlite, internalHeaders, type Collection, type ProjectId } from '@plinth/shared';
import { SqliteRecordStore } from '@plinth/records';
import { startCluster } from '@plinth/testing/cluster';
import { formatTable, load, ratio, type LoadResult } from './load';
import { runEntry, sampleTreeMemory } from './processes';

/**
 * Records benchmarks: create, get by id, `where owner == x orderBy created_at desc
 * limit 20` on 100k records, and PATCH with version — standalone (gateway in-process), cluster
 * (gateway proxying to a records process) and direct to that records process, with a bare
 * express app as the ceiling; then the query's p50 at 10k, 100k and 1M records (SQLite, indexed
 * `owner`). Records are seeded straight into the SQLite file (one transaction), the API creates
 * the project and collection. BENCH_SECONDS sets each load's duration (default 5).
 */

const PROJECT = asProjectId('bench');
/** The load is one secret key at thousands of requests per second: far above its default rate limit. */
const BENCH_LIMITS = { PLINTH_RATE_LIMIT_SECRET_KEY: '1000000000' };
const OWNERS = 1000;
const FIELDS = { owner: { type: 'text', indexed: true }, title: { type: 'text' }, n: { type: 'integer' } };

export interface Target {
  label: string;
  url: string;
  /** Headers of one request (direct calls sign each one: a service accepts a credential once). */
  headers: (method: string, path: string, body?: string) => Record<string, string>;
}

/** Appends records (owner = n % 1000) to the collection in the SQLite file, in one transaction. */
export async function seed(file: string, from: number, to: number): Promise<string[]> {
  const db = openSqlite(file);
  const store = new SqliteRecordStore(db);
  const collection = (await store.getCollection(PROJECT, 'items')) as Collection;
  const ids: string[] = [];
  const start = Date.UTC(2026, 0, 1);
  db.transaction(() => {
    for (let n = from; n < to; n++) {
      const at = new Date(start + n * 10).toISOString();
      const id = newId('rec_', start + n * 10);
      ids.push(id);
      void store.insertRecord(PROJECT, collection, { id, version: 1, created_at: at, updated_at: at, owner: `o${n % OWNERS}`, title: `t${n}`, n });
    }
  })();
  await store.close();
  return ids;
}

/** One autocannon run whose request i is made by `make(i)` (shared counter across connections). */
export async function cycle(
  name: string,
  target: Target,
  make: (i: number) => { method: 'GET' | 'POST' | 'PATCH'; path: string; body?: string },
): Promise<LoadResult> {
  let i = 0;
  const run = (duration: number) =>
    autocannon({
      url: target.url,
      connections: 32,
      duration,
      headers: { 'Content-Type': 'application/json' },
      requests: [
        {
          setupRequest: (req: autocannon.Request) => {
            const r = make(i++);
            const headers = { ...req.headers, ...target.headers(r.method, r.path, r.body) };
            return { ...req, method: r.method, path: r.path, body: r.body, headers };
          },
        },
      ],
    });
  await run(1); // warm-up: JIT, statement cache, page cache
  const result = await run(Number(process.env.BENCH_SECONDS ?? 5));
  return { name, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors, non2xx: result.non2xx };
}

export const base = `/v1/projects/${PROJECT}/collections/items/records`;
export const queryPath = (i: number): string =>
  `${base}?where=${encodeURIComponent(JSON.stringify([['owner', '==', `o${i % OWNERS}`]]))}&orderBy=created_at&direction=desc&limit=20`;

/** The four record operations against one target; `patchIds` are version-1 records only it patches. */
async function operations(target: Target, getIds: string[], patchIds: string[], beside?: Beside): Promise<LoadResult[]> {
  const op = async (name: string, make: Parameters<typeof cycle>[2]): Promise<LoadResult> => {
    const hello = await beside?.measure();
    const result = await cycle(`${target.label}: ${name}`, target, make);
    if (hello) beside?.pairs.push({ op: name, hello, result });
    return result;
  };
  return [
    await op('create', () => ({ method: 'POST', path: base, body: JSON.stringify({ data: { owner: 'o-new', title: 'x', n: 1 } }) })),
    await op('get by id', (i) => ({ method: 'GET', path: `${base}/${getIds[i % getIds.length]}` })),
    await op('query owner== desc 20', (i) => ({ method: 'GET', path: queryPath(i) })),
    // Each pass over `patchIds` sends the version the previous pass left (a pass is far longer
    // than the requests in flight), so every patch is a real one, whatever the throughput.
    await op('patch with version', (i) => ({
      method: 'PATCH',
      path: `${base}/${patchIds[i % patchIds.length]}`,
      body: JSON.stringify({ data: { title: 'patched' }, version: 1 + Math.floor(i / patchIds.length) }),
    })),
  ];
}

/**
 * The express hello measured again just before each operation (its server idles meanwhile), so
 * each operation has a ceiling from the same minute: on a shared machine the speed of the cores
 * drifts over the minutes a run takes, and a ratio to the hello of the run's first minute carries
 * that drift.
 */
interface Beside {
  measure: () => Promise<LoadResult>;
  pairs: Array<{ op: string; hello: LoadResult; result: LoadResult }>;
}

export async function createProjectAndCollection(url: string, adminKey: string): Promise<string> {
  const created = await fetch(`${url}/v1/admin/projects`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ id: PROJECT }),
  });
  const { keys } = (await created.json()) as { keys: { secret: string } };
  const res = await fetch(`${url}/v1/projects/${PROJECT}/collections`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${keys.secret}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'items', fields: FIELDS }),
  });
  if (res.status !== 201) throw new Error(`create collection: ${res.status} ${await res.text()}`);
  return keys.secret;
}

function directHeaders(secret: string, project: ProjectId): Target['headers'] {
  return (method, path, body) =>
    internalHeaders(secret, { project, keyKind: 'secret', requestId: `bench-${randomBytes(4).toString('hex')}` }, { method, path }, body);
}

/** Standalone with `workers` processes on `dataDir`; the secret key of the bench project. */
export async function startStandalone(dataDir: string, adminKey: string, workers: number) {
  return runEntry('gateway/dist/standalone.js', { PLINTH_DATA_DIR: dataDir, PLINTH_ADMIN_KEY: adminKey, PLINTH_WORKERS: String(workers), ...BENCH_LIMITS });
}

/** What a single-worker bench measures against: a standalone ×1 on a fresh data directory and the bench project with its `items` collection. */
export interface BenchProject {
  url: string;
  secret: string;
  dataDir: string;
  /** The standalone, called with the project's secret key. */
  target: Target;
}

/** Runs `measure` against a fresh BenchProject (`name` names its data directory), then stops the server and removes the directory. */
export async function withBenchProject<T>(name: string, measure: (b: BenchProject) => Promise<T>): Promise<T> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `plinth-bench-${name}-`));
  const adminKey = `adm_${randomBytes(24).toString('hex')}`;
  try {
    const server = await startStandalone(dataDir, adminKey, 1);
    try {
      const secret = await createProjectAndCollection(server.url, adminKey);
      const target: Target = { label: 'standalone ×1', url: server.url, headers: () => ({ Authorization: `Bearer ${secret}` }) };
      return await measure({ url: server.url, secret, dataDir, target });
    } finally {
      await server.stop();
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function benchRecords(): Promise<string> {
  const rows: LoadResult[] = [];
  const sizes: LoadResult[] = [];
  const workers = Number(process.env.BENCH_WORKERS ?? os.availableParallelism());
  const multi = `standalone ×${workers}`;

  // node:http first, so that the express hello server, which stays up (idle) through the
  // standalone loads for `beside`, is stopped by one `finally`.
  const bare = await runEntry('bench/dist/bare-hello-server.js', {}, '/hello');
  let bareRow: LoadResult;
  try {
    bareRow = await load('node:http hello', { url: `${bare.url}/hello` });
  } finally {
    await bare.stop();
  }
  const hello = await runEntry('bench/dist/hello-server.js', {}, '/hello');
  const beside: Beside = { measure: () => load('express hello (just before)', { url: `${hello.url}/hello` }), pairs: [] };
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-bench-records-'));
  const adminKey = `adm_${randomBytes(24).toString('hex')}`;
  const file = path.join(dataDir, 'records.db');
  let peak = { rss: 0, pss: 0 };
  try {
    rows.push(await load('express hello (ceiling)', { url: `${hello.url}/hello` }));
    rows.push(
      await load('express hello POST (write ceiling)', {
        url: `${hello.url}/hello`,
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ data: { owner: 'o-new', title: 'x', n: 1 } }),
      }),
    );
    rows.push(bareRow);
    // One worker: the query as the collection grows to 100k, then the four operations.
    let ids: string[];
    let secret: string;
    const single = await startStandalone(dataDir, adminKey, 1);
    try {
      secret = await createProjectAndCollection(single.url, adminKey);
      const target: Target = { label: 'standalone ×1', url: single.url, headers: () => ({ Authorization: `Bearer ${secret}` }) };
      const queryAt = async (label: string): Promise<LoadResult> => cycle(`query p50 at ${label}`, target, (i) => ({ method: 'GET', path: queryPath(i) }));
      ids = await seed(file, 0, 10_000);
      sizes.push(await queryAt('10k'));
      ids = ids.concat(await seed(file, 10_000, 100_000));
      sizes.push(await queryAt('100k'));
      rows.push(...(await operations(target, ids, ids.slice(0, 25_000))));
    } finally {
      await single.stop();
    }
    // N workers on the same data: the same four operations (other records to patch), RSS of all.
    const many = await startStandalone(dataDir, adminKey, workers);
    try {
      const target: Target = { label: multi, url: many.url, headers: () => ({ Authorization: `Bearer ${secret}` }) };
      const memory = sampleTreeMemory(many.child.pid!);
      rows.push(...(await operations(target, ids, ids.slice(25_000, 50_000), beside)));
      peak = memory.stop();
    } finally {
      await many.stop();
    }
    await seed(file, 100_000, 1_000_000);
    const large = await startStandalone(dataDir, adminKey, 1);
    try {
      const target: Target = { label: 'standalone ×1', url: large.url, headers: () => ({ Authorization: `Bearer ${secret}` }) };
      sizes.push(await cycle('query p50 at 1M', target, (i) => ({ method: 'GET', path: queryPath(i) })));
    } finally {
      await large.stop();
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
    await hello.stop();
  }

  const cluster = await startCluster({ env: BENCH_LIMITS });
  try {
    const { secretKey } = await cluster.createProject(PROJECT);
    await fetch(`${cluster.url}/v1/projects/${PROJECT}/collections`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${secretKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'items', fields: FIELDS }),
    });
    const ids = await seed(path.join(cluster.dataDir, 'records.db'), 0, 100_000);
    const records = cluster.processes.find((x) => x.name === 'records-0');
    if (!records) throw new Error('no records process');
    const viaGateway: Target = { label: 'cluster', url: cluster.url, headers: () => ({ Authorization: `Bearer ${secretKey}` }) };
    const direct: Target = { label: 'direct', url: records.url, headers: directHeaders(cluster.internalSecret, PROJECT) };
    rows.push(...(await operations(viaGateway, ids, ids.slice(0, 50_000))));
    rows.push(...(await operations(direct, ids, ids.slice(50_000))));
  } finally {
    await cluster.stop();
  }

  const byName = (n: string): LoadResult => rows.find((r) => r.name === n) as LoadResult;
  const ceiling = byName('express hello (ceiling)');
  const writeCeiling = byName('express hello POST (write ceiling)');
  const ops = ['create', 'get by id', 'query owner== desc 20', 'patch with version'];
  const ratios = ops.map(
    (op) =>
      `${op.padEnd(22)} ×1/express ${ratio(byName(`standalone ×1: ${op}`), ceiling)}   ×${workers}/express ${ratio(byName(`${multi}: ${op}`), ceiling)}   ×${workers}/×1 ${ratio(byName(`${multi}: ${op}`), byName(`standalone ×1: ${op}`))}   cluster/direct ${ratio(byName(`cluster: ${op}`), byName(`direct: ${op}`))}`,
  );
  return [
    '## Records: 100k records, SQLite, secret key',
    '',
    formatTable(rows),
    '',
    `express hello / node:http hello: ${ratio(ceiling, byName('node:http hello'))}   express POST / express GET: ${ratio(writeCeiling, ceiling)}`,
    ...ratios,
    `${multi} against the express hello measured just before each operation: ` +
      beside.pairs.map((p) => `${p.op} ${ratio(p.result, p.hello)} (hello ${p.hello.rps.toFixed(0)} req/s)`).join(', '),
    `peak memory of the primary and all ${workers} workers under these loads: RSS summed ${(peak.rss / 1024 / 1024).toFixed(0)} MB (shared pages once per process), PSS summed ${(peak.pss / 1024 / 1024).toFixed(0)} MB (shared pages once)`,
    '',
    '## Records: `where owner == x orderBy created_at desc limit 20` as the collection grows (standalone ×1, SQLite, indexed owner)',
    '',
    formatTable(sizes),
  ].join('\n');
}
