import path from 'node:path';
import { asProjectId, newId, openSqlite, type Collection } from '@plinth/shared';
import { SqliteRecordStore } from '@plinth/records';
import { formatTable, ratio, type LoadResult } from './load';
import { cycle, queryPath, withBenchProject } from './records';

/**
 * Relations (docs/records.md, "Expanding relations") on 100k records (standalone ×1, SQLite,
 * indexed `owner`): the 20-record page query beside the same page with `expand=author`, each
 * record's author one of 1000 people (20 distinct per page), fetched in one `id in […]` query
 * per page. Target: the expanded page at least 0.5× the plain page's req/s.
 */
const PROJECT = asProjectId('bench');
const PEOPLE = 1000;
const RECORDS = 100_000;

async function api(url: string, secret: string, method: string, p: string, body: unknown): Promise<{ [k: string]: unknown }> {
  const res = await fetch(`${url}/v1/projects/${PROJECT}${p}`, {
    method,
    headers: { Authorization: `Bearer ${secret}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { [k: string]: unknown };
}

/** Items (owner = n % 1000, author = one of the people) straight into the SQLite file, in one transaction. */
async function seedItems(file: string, people: string[]): Promise<void> {
  const db = openSqlite(file);
  const store = new SqliteRecordStore(db);
  const collection = (await store.getCollection(PROJECT, 'items')) as Collection;
  const start = Date.UTC(2026, 0, 1);
  db.transaction(() => {
    for (let n = 0; n < RECORDS; n++) {
      const at = new Date(start + n * 10).toISOString();
      const author = people[n % (PEOPLE - 3)] as string;
      void store.insertRecord(PROJECT, collection, { id: newId('rec_', start + n * 10), version: 1, created_at: at, updated_at: at, owner: `o${n % 1000}`, title: `t${n}`, n, author });
    }
  })();
  await store.close();
}

export async function benchRelations(): Promise<string> {
  const rows: LoadResult[] = [];
  await withBenchProject('relations', async ({ url, secret, dataDir, target }) => {
    await api(url, secret, 'POST', '/collections', { name: 'people', fields: { name: { type: 'text' } } });
    await api(url, secret, 'PATCH', '/collections/items', { fields: { author: { type: 'relation', collection: 'people' } } });
    const people: string[] = [];
    for (let i = 0; i < PEOPLE; i++) {
      const created = await api(url, secret, 'POST', '/collections/people/records', { data: { name: `person ${i}` } });
      people.push((created.record as { id: string }).id);
    }
    await seedItems(path.join(dataDir, 'records.db'), people);
    const get = (name: string, make: (i: number) => string) => cycle(name, target, (i) => ({ method: 'GET', path: make(i) }));
    rows.push(await get('page: owner== desc 20', queryPath));
    rows.push(await get('page: owner== desc 20, expand=author', (i) => `${queryPath(i)}&expand=author`));
  });
  const plain = rows[0] as LoadResult;
  const expanded = rows[1] as LoadResult;
  return [
    '## Records: expand one relation on 100k records (standalone ×1, SQLite, indexed owner, secret key)',
    '',
    formatTable(rows),
    '',
    `expand=author / plain page: req/s ${ratio(expanded, plain)}× (target ≥ 0.5×), p50 ${(expanded.p50 / Math.max(plain.p50, 1)).toFixed(2)}×`,
  ].join('\n');
}
