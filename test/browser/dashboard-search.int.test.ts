/**
 * The dashboard's records view in headless Chromium against a standalone Plinth, signed in with
 * the project's secret key: the list's total (count=true), the text operators in the where
 * builder, and the search box of a collection with a searchable field (made searchable in the
 * collection editor), ordered by relevance.
 */
import type { Page } from 'playwright-core';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { projectCall, type ProjectAccess } from '../e2e/support/api';
import { openDashboard } from './support/dashboard-sign-in';
import type { LaunchedChromium } from './support/chromium';

describe('dashboard records: counts and search in headless Chromium', () => {
  let t: TestPlinth;
  let chromium: LaunchedChromium;
  let page: Page;
  let p: ProjectAccess;

  beforeAll(async () => {
    t = await startTestPlinth();
    const base = await t.url();
    p = { url: base, id: t.project.id, publicKey: t.project.publicKey, secretKey: t.project.secretKey };
    const made = await projectCall(p, 'POST', '/collections', { key: p.secretKey, body: { name: 'posts', fields: { title: { type: 'text' }, n: { type: 'integer' } } } });
    expect(made.status).toBe(201);
    for (const [title, n] of [['Rust basics', 1], ['Advanced Rust: rust macros', 2], ['Go channels', 3]] as const) {
      expect((await projectCall(p, 'POST', '/collections/posts/records', { key: p.secretKey, body: { data: { title, n } } })).status).toBe(201);
    }
    ({ chromium, page } = await openDashboard(base, p, 'Collections'));
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
    await t?.close();
  });

  const rows = () => page.locator('tbody tr td:nth-child(2)').allTextContents();

  it('shows the total beside the pager, and filters with contains', async () => {
    await page.click('header nav a:text-is("Collections")');
    await page.click('tr:has(td:text-is("posts")) a:text-is("Records")');
    await page.waitForSelector('h1:text-is("Records of posts")');
    await page.waitForSelector('text=3 records');
    await expect(page.locator('input[name=search]').count()).resolves.toBe(0);
    await page.click('button:text-is("Add condition")');
    await page.locator('label:has-text("Where field") select').selectOption('title');
    await page.locator('label:has-text("Operator") select').selectOption('contains');
    await page.locator('label:has-text("Value") input').fill('RUST');
    await page.click('button:text-is("Apply")');
    await page.waitForSelector('text=2 records match');
    expect(await rows()).toEqual(['Rust basics', 'Advanced Rust: rust macros']);
  });

  it('makes a field searchable in the editor, then searches by relevance', async () => {
    await page.click('header nav a:text-is("Collections")');
    await page.click('button:text-is("Edit posts")');
    await page.check('input[name=field-searchable-0]');
    await page.click('button:text-is("Save collection")');
    await page.waitForSelector('tr:has(td:text-is("posts"))');
    const def = await projectCall<{ collection: { fields: { title: { searchable?: boolean } } } }>(p, 'GET', '/collections/posts', { key: p.secretKey });
    expect(def.body.collection.fields.title.searchable).toBe(true);
    await page.click('tr:has(td:text-is("posts")) a:text-is("Records")');
    await page.fill('input[name=search]', 'rust');
    await expect(page.locator('select[name=orderBy]').inputValue()).resolves.toBe('');
    await page.click('button:text-is("Apply")');
    await page.waitForSelector('text=2 records match');
    expect(await rows()).toEqual(['Advanced Rust: rust macros', 'Rust basics']);
  });
});
