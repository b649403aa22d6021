import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { base, createProjectAndCollection, startStandalone } from './records';

/**
 * Batch writes (docs/records.md "Batch writes"): 100 records written by one
 * `POST …/batch` of 100 creates against the same 100 records written by 100 single
 * `POST …/records`, one after the other, as one client writing them would — standalone ×1
 * (SQLite), secret key, through the gateway. Each is repeated; the table shows the median and the
 * best round. Target: the batch at least 5× faster than the 100 single creates.
 */
const ROUNDS = Number(process.env.BENCH_BATCH_ROUNDS ?? 20);
const SIZE = 100;

async function post(url: string, secret: string, route: string, body: unknown): Promise<void> {
  const res = await fetch(`${url}${route}`, { method: 'POST', headers: { Authorization: `Bearer ${secret}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  if (res.status !== 200 && res.status !== 201) throw new Error(`${route}: ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
}

async function timed(rounds: number, run: (round: number) => Promise<void>): Promise<number[]> {
  const out: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const started = process.hrtime.bigint();
    await run(r);
    out.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return out.sort((a, b) => a - b);
}

const median = (xs: number[]): number => xs[Math.floor(xs.length / 2)] as number;

export async function benchBatchWrites(): Promise<string> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-bench-batch-'));
  const adminKey = `adm_${randomBytes(24).toString('hex')}`;
  try {
    const server = await startStandalone(dataDir, adminKey, 1);
    try {
      const secret = await createProjectAndCollection(server.url, adminKey);
      const project = base.split('/')[3] as string;
      const data = (r: number, i: number) => ({ owner: `o${i % 10}`, title: `round ${r} item ${i}`, n: i });
      // Warm both paths (statements prepared, JIT) before measuring.
      await post(server.url, secret, base, { data: data(-1, 0) });
      await post(server.url, secret, `/v1/projects/${project}/batch`, { operations: [{ op: 'create', collection: 'items', data: data(-1, 1) }] });
      const singles = await timed(ROUNDS, async (r) => {
        for (let i = 0; i < SIZE; i++) await post(server.url, secret, base, { data: data(r, i) });
      });
      const batches = await timed(ROUNDS, async (r) => {
        const operations = Array.from({ length: SIZE }, (_, i) => ({ op: 'create', collection: 'items', data: data(r, i) }));
        await post(server.url, secret, `/v1/projects/${project}/batch`, { operations });
      });
      const speedup = median(singles) / median(batches);
      return [
        `## Records: ${SIZE} creates as one batch against ${SIZE} single creates (standalone ×1, SQLite, secret key, ${ROUNDS} rounds each)`,
        '',
        '| way | median ms | best ms | records/s (median) |',
        '|---|---:|---:|---:|',
        `| ${SIZE} × POST …/records, one after the other | ${median(singles).toFixed(1)} | ${(singles[0] as number).toFixed(1)} | ${Math.round((SIZE * 1000) / median(singles))} |`,
        `| 1 × POST …/batch with ${SIZE} creates | ${median(batches).toFixed(1)} | ${(batches[0] as number).toFixed(1)} | ${Math.round((SIZE * 1000) / median(batches))} |`,
        '',
        `batch / singles: ${speedup.toFixed(1)}× faster (target ≥ 5×)`,
      ].join('\n');
    } finally {
      await server.stop();
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
