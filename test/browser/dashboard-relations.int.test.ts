/**
 * The dashboard's relation picker and expanded records, in headless Chromium against a
 * standalone Plinth signed in with the secret key: a new record's relation is picked from a
 * select of the target collection's ids (a list relation from a multiple select), and the record
 * editor shows the records its relations point at.
 */
import type { Page } from 'playwright-core';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { projectCall, type ProjectAccess } from '../e2e/support/api';
import { openDashboard } from './support/dashboard-sign-in';
import type { LaunchedChromium } from './support/chromium';

describe('dashboard relations in headless Chromium', () => {
  let t: TestPlinth;
  let chromium: LaunchedChromium;
  let page: Page;
  let p: ProjectAccess;
  const people: string[] = [];

  beforeAll(async () => {
    t = await startTestPlinth();
    const base = await t.url();
    p = { url: base, id: t.project.id, publicKey: t.project.publicKey, secretKey: t.project.secretKey };
    expect((await projectCall(p, 'POST', '/collections', { key: p.secretKey, body: { name: 'people', fields: { name: { type: 'text' } } } })).status).toBe(201);
    const posts = {
      name: 'posts',
      fields: { author: { type: 'relation', collection: 'people' }, editors: { type: 'relation', collection: 'people', max_items: 3 } },
    };
    expect((await projectCall(p, 'POST', '/collections', { key: p.secretKey, body: posts })).status).toBe(201);
    for (const name of ['Ann', 'Bob']) {
      const made = await projectCall<{ record: { id: string } }>(p, 'POST', '/collections/people/records', { key: p.secretKey, body: { data: { name } } });
      people.push(made.body.record.id);
    }
    ({ chromium, page } = await openDashboard(base, p, 'Collections'));
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
    await t?.close();
  });

  it('picks relation ids from selects, and shows the related records of a record', async () => {
    const [ann, bob] = people as [string, string];
    await page.click('header nav a:text-is("Records")');
    await page.selectOption('section[aria-labelledby=records-h] label:has-text("Collection") select', 'posts');
    await page.waitForSelector('h1:text-is("Records of posts")');
    await page.click('button:text-is("New record")');
    await page.waitForSelector(`select[name=record-author] option:text-is("${ann}")`, { state: 'attached' });
    await page.selectOption('select[name=record-author]', ann);
    await page.selectOption('select[name=record-editors]', [bob, ann]);
    await page.click('button:text-is("Create record")');
    await page.waitForSelector(`td:text-is("${ann}")`);

    const stored = await projectCall<{ records: Array<{ id: string; author: string; editors: string[] }> }>(p, 'GET', '/collections/posts/records', { key: p.secretKey });
    expect(stored.body.records).toHaveLength(1);
    const post = stored.body.records[0]!;
    expect(post.author).toBe(ann);
    expect([...post.editors].sort()).toEqual([ann, bob].sort());

    await page.click(`button[aria-label="Edit ${post.id}"]`);
    const related = page.locator('[role=region][aria-label="Related records"]');
    await related.waitFor();
    const text = await related.innerText();
    expect(text).toContain('Ann');
    expect(text).toContain('Bob');
  });
});
