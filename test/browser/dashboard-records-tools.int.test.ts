/**
 * The records table's tools in headless Chromium against a standalone Plinth, signed in with the
 * project's secret key: a cell edited in place (saved with the version the row shows, so a record
 * changed meanwhile is a 409 and is not overwritten), CSV export of the whole query (every page,
 * RFC 4180 quoting), and the API preview — its curl command and SDK code are run here, with the
 * key in PLINTH_KEY, and must answer what the table shows, without the key written in them.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import type { Page } from 'playwright-core';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { projectCall, type ProjectAccess } from '../e2e/support/api';
import { openDashboard } from './support/dashboard-sign-in';
import type { LaunchedChromium } from './support/chromium';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
/** Screenshots (git-ignored). */
const ARTIFACTS = path.join(ROOT, 'test-artifacts/dashboard');

interface Rec {
  id: string;
  version: number;
  title?: string;
  n?: number;
  tags?: string[];
  [k: string]: unknown;
}

/** RFC 4180: fields split by commas, records by CRLF, quoted fields may hold both and `""`. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), (i += 1);
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') row.push(field), (field = '');
    else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      (row = []), (field = ''), (i += 1);
    } else field += c;
  }
  expect(field).toBe(''); // the last record ends with CRLF
  return rows;
}

describe('dashboard records: inline edit, CSV export, API preview in headless Chromium', () => {
  let t: TestPlinth;
  let chromium: LaunchedChromium;
  let page: Page;
  let p: ProjectAccess;
  let tmp: string;
  const TITLES = ['plain', 'comma, inside', 'quote "inside"', 'line\nbreak', 'unicode é ✓', '=1+1'];

  const cell = (id: string, field: string) => page.locator(`tr:has(td:text-is("${id}")) td[data-field=${field}]`);
  const get = async (id: string) => (await projectCall<{ record: Rec }>(p, 'GET', `/collections/notes/records/${id}`, { key: p.secretKey })).body.record;
  /** Every record of the query, read straight from the API. */
  async function apiAll(params: Record<string, string>): Promise<Rec[]> {
    const q = new URLSearchParams({ ...params, limit: '1000' });
    return (await projectCall<{ records: Rec[] }>(p, 'GET', `/collections/notes/records?${q.toString()}`, { key: p.secretKey })).body.records;
  }
  async function applyQuery(q: { where?: [string, string, string]; orderBy?: string; direction?: string; limit?: number; search?: string }) {
    while ((await page.locator('button:text-is("Remove condition")').count()) > 0) await page.click('button:text-is("Remove condition")');
    if (q.where) {
      await page.click('button:text-is("Add condition")');
      await page.locator('label:has-text("Where field") select').selectOption(q.where[0]);
      await page.locator('label:has-text("Operator") select').selectOption(q.where[1]);
      await page.locator('label:has-text("Value") input').fill(q.where[2]);
    }
    await page.fill('input[name=search]', q.search ?? '');
    await page.selectOption('select[name=orderBy]', q.orderBy ?? 'created_at');
    await page.selectOption('select[name=direction]', q.direction ?? 'asc');
    await page.fill('input[name=limit]', String(q.limit ?? 20));
    await page.click('button:text-is("Apply")');
  }

  beforeAll(async () => {
    t = await startTestPlinth();
    const base = await t.url();
    p = { url: base, id: t.project.id, publicKey: t.project.publicKey, secretKey: t.project.secretKey };
    const made = await projectCall(p, 'POST', '/collections', {
      key: p.secretKey,
      body: { name: 'notes', fields: { title: { type: 'text', searchable: true }, n: { type: 'integer' }, tags: { type: 'list' } } },
    });
    expect(made.status).toBe(201);
    for (const [i, title] of TITLES.entries()) {
      const r = await projectCall(p, 'POST', '/collections/notes/records', { key: p.secretKey, body: { data: { title, n: i + 1, ...(i % 2 ? { tags: ['a', 'b,c'] } : {}) } } });
      expect(r.status).toBe(201);
    }
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-api-preview-'));
    ({ chromium, page } = await openDashboard(base, p, 'Collections', { width: 1280, height: 900 }));
    await page.click('header nav a:text-is("Collections")');
    await page.click('tr:has(td:text-is("notes")) a:text-is("Records")');
    await page.waitForSelector('text=6 records');
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
    await t?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('edits a cell in place with the row\'s version; a record changed meanwhile is a 409 and keeps the other write', async () => {
    const all = await apiAll({});
    const [first, second] = [all[0], all[4]]; // 'plain' and 'unicode é ✓'
    await cell(first!.id, 'title').dblclick();
    await page.fill(`input[aria-label="title of ${first!.id}"]`, 'edited in place');
    await page.press(`input[aria-label="title of ${first!.id}"]`, 'Enter');
    await page.waitForSelector(`tr:has(td:text-is("${first!.id}")) td[data-field=title]:text-is("edited in place")`);
    expect(await get(first!.id)).toMatchObject({ title: 'edited in place', n: 1, version: 2 });

    // By keyboard: focus the cell, Enter, type, Save. The row now shows version 2.
    await cell(first!.id, 'n').focus();
    await page.keyboard.press('Enter');
    await page.fill(`input[aria-label="n of ${first!.id}"]`, '42');
    await page.click(`tr:has(td:text-is("${first!.id}")) button:text-is("Save")`);
    await page.waitForSelector(`tr:has(td:text-is("${first!.id}")) td[data-field=n]:text-is("42")`);
    expect(await get(first!.id)).toMatchObject({ title: 'edited in place', n: 42, version: 3 });

    // Someone else writes while the cell is open: the save is refused, nothing of theirs is lost.
    await cell(second!.id, 'title').dblclick();
    const other = await projectCall(p, 'PATCH', `/collections/notes/records/${second!.id}`, { key: p.secretKey, body: { data: { title: 'written elsewhere' } } });
    expect(other.status).toBe(200);
    await page.fill(`input[aria-label="title of ${second!.id}"]`, 'mine');
    await page.press(`input[aria-label="title of ${second!.id}"]`, 'Enter');
    await expect(page.locator('[role=alert]').first().textContent()).resolves.toContain('409');
    await page.waitForSelector(`tr:has(td:text-is("${second!.id}")) td[data-field=title]:text-is("written elsewhere")`);
    expect(await get(second!.id)).toMatchObject({ title: 'written elsewhere', version: 2 });
  });

  it('exports every page of the query as CSV, quoting commas, quotes and line breaks', async () => {
    await applyQuery({ where: ['n', '<=', '6'], orderBy: 'n', direction: 'desc', limit: 2 });
    await page.waitForSelector('text=5 records match');
    expect(await page.locator('tbody tr').count()).toBe(2);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('button:text-is("Export CSV")')]);
    expect(download.suggestedFilename()).toBe('notes.csv');
    const text = fs.readFileSync((await download.path()) as string, 'utf8');
    expect(text).toContain('"quote ""inside"""');
    expect(text).toContain('"line\nbreak"');
    const rows = parseCsv(text);
    const expected = await apiAll({ where: JSON.stringify([['n', '<=', 6]]), orderBy: 'n', direction: 'desc' });
    expect(expected).toHaveLength(5);
    expect(rows[0]).toEqual(['id', 'title', 'n', 'tags', 'version', 'created_at', 'updated_at']);
    expect(rows.slice(1)).toEqual(
      expected.map((r) => [r.id, r.title ?? '', String(r.n), r.tags ? JSON.stringify(r.tags) : '', String(r.version), String(r.created_at), String(r.updated_at)]),
    );
    expect(rows.slice(1).map((r) => r[1])).toContain('=1+1');
  });

  it('exports a query of more than one export page (1000 records a request), each record once, in order', async () => {
    expect((await projectCall(p, 'POST', '/collections', { key: p.secretKey, body: { name: 'bulk', fields: { k: { type: 'integer' } } } })).status).toBe(201);
    for (let b = 0; b < 11; b += 1) {
      const operations = Array.from({ length: b < 10 ? 100 : 5 }, (_, i) => ({ op: 'create', collection: 'bulk', data: { k: b * 100 + i } }));
      expect((await projectCall(p, 'POST', '/batch', { key: p.secretKey, body: { operations } })).status).toBe(200);
    }
    await page.click('header nav a:text-is("Collections")');
    await page.click('tr:has(td:text-is("bulk")) a:text-is("Records")');
    await page.waitForSelector('text=1005 records');
    await page.selectOption('select[name=orderBy]', 'k');
    await page.selectOption('select[name=direction]', 'desc');
    await page.click('button:text-is("Apply")');
    await page.waitForSelector('tbody tr td[data-field=k]:text-is("1004")');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('button:text-is("Export CSV")')]);
    const rows = parseCsv(fs.readFileSync((await download.path()) as string, 'utf8')).slice(1);
    expect(rows.map((r) => Number(r[1]))).toEqual(Array.from({ length: 1005 }, (_, i) => 1004 - i));
    expect(new Set(rows.map((r) => r[0])).size).toBe(1005);
  });

  it('previews the query as curl and SDK code that answer what the table shows, with no key in them', async () => {
    await page.selectOption('section[aria-labelledby=records-h] label:has-text("Collection") select', 'notes');
    await page.waitForSelector('h1:text-is("Records of notes")');
    await applyQuery({ where: ['n', '<=', '6'], orderBy: 'n', direction: 'desc', limit: 2 });
    await page.waitForSelector('text=5 records match');
    await page.click('button:text-is("API preview")');
    const curl = (await page.locator('pre[aria-label="curl command"]').textContent()) as string;
    const sdk = (await page.locator('pre[aria-label="SDK code"]').textContent()) as string;
    for (const code of [curl, sdk]) {
      expect(code).toContain('PLINTH_KEY');
      expect(code).not.toContain(p.secretKey);
      expect(code).not.toMatch(/\b(sk|pk|adm)_[A-Za-z0-9]/);
    }
    const shown = await page.locator('tbody tr td:first-child').allTextContents();
    expect(shown).toHaveLength(2);
    await page.locator('main').screenshot({ path: path.join(ARTIFACTS, '06-records-api-preview.png') });
    const env = { ...process.env, PLINTH_KEY: p.secretKey };

    const viaCurl = JSON.parse((await run('bash', ['-c', curl], { env, timeout: 10_000 })).stdout) as { records: Rec[]; total: number };
    expect(viaCurl.records.map((r) => r.id)).toEqual(shown);
    expect(viaCurl.total).toBe(5);

    // Bundled as the README's SDK example is (clients/js/test/readme-example), from the SDK's source.
    const file = path.join(tmp, 'api-preview-sdk.mjs');
    await build({
      stdin: { contents: `${sdk}\nprocess.stdout.write('\\n' + JSON.stringify({ ids: page.records.map((r) => r.id), total: page.total }));\n`, loader: 'ts', resolveDir: tmp },
      bundle: true,
      format: 'esm',
      platform: 'node',
      outfile: file,
      logLevel: 'silent',
      plugins: [{ name: 'plinth-client-source', setup: (b) => b.onResolve({ filter: /^@plinth\/client$/ }, () => ({ path: path.join(ROOT, 'clients/js/src/index.ts') })) }],
    });
    const out = (await run(process.execPath, [file], { env, timeout: 10_000 })).stdout.trim().split('\n');
    expect(JSON.parse(out[out.length - 1] as string)).toEqual({ ids: shown, total: 5 });

    // A search, and a value with a quote: the preview follows the applied query.
    await applyQuery({ search: 'inside' });
    await page.waitForSelector('text=2 records match');
    const searchCurl = (await page.locator('pre[aria-label="curl command"]').textContent()) as string;
    const found = JSON.parse((await run('bash', ['-c', searchCurl], { env, timeout: 10_000 })).stdout) as { records: Rec[]; total: number };
    expect(found.records.map((r) => r.title).sort()).toEqual(['comma, inside', 'quote "inside"']);
    await applyQuery({ where: ['title', '==', "it's"] });
    await page.waitForSelector('text=0 records match');
    const quoted = (await page.locator('pre[aria-label="curl command"]').textContent()) as string;
    expect(JSON.parse((await run('bash', ['-c', quoted], { env, timeout: 10_000 })).stdout)).toMatchObject({ records: [], total: 0 });
  });
});
