import path from 'node:path';
import { formatTable, ratio, type LoadResult } from './load';
import { base, cycle, queryPath, seed, withBenchProject } from './records';

/**
 * Counts and aggregates on 100k records (standalone ×1, SQLite, indexed `owner`, 100
 * records per owner): the 20-record page query beside `GET …/aggregate?count=true` with the same
 * indexed where (a count over the index, no record bodies read), a count over an indexed range
 * of ≈ 11k records, the page with `count=true`, and a sum of an unindexed field over one owner.
 * Target: the indexed count at most 2× the page query's latency (p50), i.e. at least 0.5× its req/s.
 */
const OWNERS = 1000;
const aggregatePath = (query: string): string => base.replace(/\/records$/, `/aggregate?${query}`);
const ownerWhere = (i: number): string => `where=${encodeURIComponent(JSON.stringify([['owner', '==', `o${i % OWNERS}`]]))}`;

export async function benchRecordCounts(): Promise<string> {
  const rows: LoadResult[] = [];
  await withBenchProject('counts', async ({ dataDir, target }) => {
    await seed(path.join(dataDir, 'records.db'), 0, 100_000);
    const get = (name: string, make: (i: number) => string) => cycle(name, target, (i) => ({ method: 'GET', path: make(i) }));
    rows.push(await get('page: owner== desc 20', queryPath));
    rows.push(await get('count: owner== (100 records, index only)', (i) => aggregatePath(`${ownerWhere(i)}&count=true`)));
    rows.push(
      await get('count: owner >= o9 (≈11k records, index only)', () =>
        aggregatePath(`where=${encodeURIComponent(JSON.stringify([['owner', '>=', 'o9']]))}&count=true`),
      ),
    );
    rows.push(await get('page with count=true: owner== desc 20', (i) => `${queryPath(i)}&count=true`));
    rows.push(await get('sum+avg of n: owner== (100 bodies read)', (i) => aggregatePath(`${ownerWhere(i)}&sum=n&avg=n`)));
  });
  const page = rows[0] as LoadResult;
  const count = rows[1] as LoadResult;
  return [
    '## Records: counts and aggregates on 100k records (standalone ×1, SQLite, indexed owner, secret key)',
    '',
    formatTable(rows),
    '',
    `indexed count / page query: p50 ${(count.p50 / page.p50).toFixed(2)}× (target ≤ 2×), req/s ${ratio(count, page)}× (target ≥ 0.5×)`,
  ].join('\n');
}
