import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { signInternal } from '@plinth/shared';
import { startCluster } from '../testing/cluster';
import { formatTable, load, ratio, type LoadResult } from './load';
import { runEntry } from './processes';

/**
 * The cost of the gateway itself: the same authenticated request (list collections) answered
 * by the standalone process, through the cluster gateway, and by the records process directly,
 * with a bare express app as the machine's ceiling — all in one run.
 */
export async function benchGatewayPath(): Promise<string> {
  const rows: LoadResult[] = [];
  const hello = await runEntry('gateway/dist/bench/hello-server.js', {}, '/hello');
  try {
    rows.push(await load('express hello (ceiling)', { url: `${hello.url}/hello` }));
  } finally {
    await hello.stop();
  }

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-bench-'));
  const adminKey = `adm_${randomBytes(24).toString('hex')}`;
  const standalone = await runEntry('gateway/dist/standalone.js', { PLINTH_DATA_DIR: dataDir, PLINTH_ADMIN_KEY: adminKey });
  try {
    const created = await fetch(`${standalone.url}/v1/admin/projects`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ id: 'bench' }),
    });
    const { keys } = (await created.json()) as { keys: { secret: string } };
    rows.push(
      await load('standalone: list collections', {
        url: `${standalone.url}/v1/projects/bench/collections`,
        headers: { Authorization: `Bearer ${keys.secret}` },
      }),
    );
  } finally {
    await standalone.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }

  const cluster = await startCluster();
  try {
    const p = await cluster.createProject('bench');
    rows.push(
      await load('cluster: gateway → records', {
        url: `${cluster.url}/v1/projects/bench/collections`,
        headers: { Authorization: `Bearer ${p.secretKey}` },
      }),
    );
    const records = cluster.processes.find((x) => x.name === 'records-0')!;
    const id = { project: 'bench', keyKind: 'secret' as const, requestId: 'bench-direct' };
    rows.push(
      await load('direct: records', {
        url: `${records.url}/v1/projects/bench/collections`,
        headers: {
          'X-Plinth-Project': id.project,
          'X-Plinth-Key-Kind': id.keyKind,
          'X-Request-Id': id.requestId,
          'X-Plinth-Internal': signInternal(cluster.internalSecret, id),
        },
      }),
    );
  } finally {
    await cluster.stop();
  }
  const [ceiling, standaloneRow, clusterRow, direct] = rows as [LoadResult, LoadResult, LoadResult, LoadResult];
  return [
    '## Gateway path: list collections (secret key)',
    '',
    formatTable(rows),
    '',
    `standalone / express hello: ${ratio(standaloneRow, ceiling)}`,
    `cluster gateway / direct:   ${ratio(clusterRow, direct)}`,
  ].join('\n');
}
