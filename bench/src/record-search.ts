import path from 'node:path';
import autocannon from 'autocannon';
import { asProjectId, newId, openSqlite, type Collection } from '@plinth/shared';
import { SqliteRecordStore } from '@plinth/records';
import { formatTable, type LoadResult } from './load';
import { withBenchProject } from './records';

/**
 * Text search on 100k records (standalone ×1, SQLite): full-text `?search=` over two searchable
 * fields (ranked, and with `count=true`), `contains` on an unindexed text field narrowed by an
 * indexed owner, beside the 20-record page query of the same collection, at 32 connections (as
 * the other scenarios) and at 1 (a search's own latency). Records hold 4 + 20 words drawn from
 * 5 000 made-up words with a skewed frequency, so a searched word matches from ≈ 100 to ≈ 2 000
 * records. Target: search p99 ≤ 50 ms.
 */
const PROJECT = asProjectId('bench');
const RECORDS = 100_000;
const OWNERS = 1000;
const VOCABULARY = 5000;
const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'ze', 'po', 'da', 'fi', 'gu', 'he', 'jo', 'ly'];
const articles = `/v1/projects/${PROJECT}/collections/articles/records`;

/** Word k: three syllables from its digits (distinct for k < 16³). */
function word(k: number): string {
  return [k % 16, Math.floor(k / 16) % 16, Math.floor(k / 256) % 16].map((d) => SYLLABLES[d]).join('');
}

/** A deterministic generator, so every run searches the same collection. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

function words(next: () => number, n: number): string {
  return Array.from({ length: n }, () => word(Math.floor(VOCABULARY * next() ** 2))).join(' ');
}

async function seedArticles(file: string): Promise<void> {
  const db = openSqlite(file);
  const store = new SqliteRecordStore(db);
  const collection = (await store.getCollection(PROJECT, 'articles')) as Collection;
  const next = random(42);
  const start = Date.UTC(2026, 0, 1);
  db.transaction(() => {
    for (let n = 0; n < RECORDS; n++) {
      const at = new Date(start + n * 10).toISOString();
      const data = { owner: `o${n % OWNERS}`, title: words(next, 4), body: words(next, 20), n };
      void store.insertRecord(PROJECT, collection, { id: newId('rec_', start + n * 10), version: 1, created_at: at, updated_at: at, ...data });
    }
  })();
  await store.close();
}

async function run(name: string, url: string, secret: string, connections: number, make: (i: number) => string): Promise<LoadResult> {
  let i = 0;
  const once = (duration: number) =>
    autocannon({
      url,
      connections,
      duration,
      headers: { Authorization: `Bearer ${secret}` },
      requests: [{ setupRequest: (req: autocannon.Request) => ({ ...req, method: 'GET', path: make(i++) }) }],
    });
  await once(1);
  const r = await once(Number(process.env.BENCH_SECONDS ?? 5));
  return { name: `${name} ×${connections}`, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors, non2xx: r.non2xx };
}

const q = (params: { [k: string]: string }): string => `${articles}?${new URLSearchParams(params).toString()}`;
/** A word of mid frequency: ≈ 100–2 000 matching records. */
const searched = (i: number): string => word(50 + ((i * 7919) % 1950));

export async function benchRecordSearch(): Promise<string> {
  const rows: LoadResult[] = [];
  return withBenchProject('search', async ({ url, secret, dataDir }) => {
    const created = await fetch(`${url}/v1/projects/${PROJECT}/collections`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${secret}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        name: 'articles',
        fields: { owner: { type: 'text', indexed: true }, title: { type: 'text', searchable: true }, body: { type: 'text', searchable: true }, n: { type: 'integer' } },
      }),
    });
    if (created.status !== 201) throw new Error(`create articles: ${created.status} ${await created.text()}`);
    const seeded = Date.now();
    await seedArticles(path.join(dataDir, 'records.db'));
    const seedSeconds = (Date.now() - seeded) / 1000;
    const page = (i: number) => q({ where: JSON.stringify([['owner', '==', `o${i % OWNERS}`]]), orderBy: 'created_at', direction: 'desc', limit: '20' });
    for (const connections of [32, 1]) {
      rows.push(await run('page: owner== desc 20', url, secret, connections, page));
      rows.push(await run('search: one word, ranked, 20', url, secret, connections, (i) => q({ search: searched(i), limit: '20' })));
      rows.push(await run('search: two words, ranked, 20', url, secret, connections, (i) => q({ search: `${searched(i)} ${searched(i + 1)}`, limit: '20' })));
      rows.push(await run('search: one word + count=true', url, secret, connections, (i) => q({ search: searched(i), limit: '20', count: 'true' })));
      rows.push(
        await run('where owner== AND title contains', url, secret, connections, (i) =>
          q({ where: JSON.stringify([['owner', '==', `o${i % OWNERS}`], ['title', 'contains', SYLLABLES[i % 16] as string]]), limit: '20' }),
        ),
      );
    }
    return [
      `## Records: text search on ${RECORDS / 1000}k records (standalone ×1, SQLite FTS5, secret key; seeded with the index in ${seedSeconds.toFixed(1)} s)`,
      '',
      formatTable(rows),
      '',
      `search p99 (one word, ranked): ${(rows[1] as LoadResult).p99} ms at 32 connections, ${(rows[6] as LoadResult).p99} ms at 1 (target ≤ 50 ms)`,
    ].join('\n');
  });
}
