/**
 * Dashboard forms that used to trap their user, in headless Chromium against a standalone Plinth
 * on a real port, signed in with the project's secret key:
 * - a second user created without typing a password got the first user's password (now the
 *   password field empties after each create, and an empty one is refused unless "No password"
 *   is ticked);
 * - "New record" after a failed create showed the failed values again;
 * - "Retry my changes on version N" after a 409 did not save;
 * - at 375 px (a phone) tables pushed the page wider than the screen (each screen is
 *   photographed to test-artifacts/dashboard/narrow-*.png).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { enableAuth, projectCall, type ProjectAccess } from '../e2e/support/api';
import { openDashboard } from './support/dashboard-sign-in';
import type { LaunchedChromium } from './support/chromium';

const PASSWORD = 'first user password';
/** Where the 375 px screenshots go (git-ignored). */
const SHOTS = path.resolve(__dirname, '../../test-artifacts/dashboard');

describe('dashboard forms in headless Chromium', () => {
  let t: TestPlinth;
  let chromium: LaunchedChromium;
  let page: Page;
  let base: string;
  let p: ProjectAccess;

  beforeAll(async () => {
    t = await startTestPlinth({ env: { PLINTH_BCRYPT_COST: '4' } });
    base = await t.url();
    p = { url: base, id: t.project.id, publicKey: t.project.publicKey, secretKey: t.project.secretKey };
    await enableAuth(p);
    const made = await projectCall(p, 'POST', '/collections', {
      key: p.secretKey,
      body: { name: 'items', fields: { title: { type: 'text', required: true }, n: { type: 'integer' }, tags: { type: 'list' } } },
    });
    expect(made.status).toBe(201);
    ({ chromium, page } = await openDashboard(base, p, 'Collections'));
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
    await t?.close();
  });

  const go = (screen: string) => page.click(`header nav a:text-is("${screen}")`);

  it('refuses a user without a password unless "No password" is ticked, and never carries a password over', async () => {
    await go('Users');
    await page.fill('input[name=new-user-email]', 'first@forms.example');
    await page.fill('input[name=new-user-password]', PASSWORD);
    await page.click('button:text-is("Create user")');
    await page.waitForSelector('td:text-is("first@forms.example")');
    await expect(page.locator('input[name=new-user-password]').inputValue()).resolves.toBe('');
    await expect(page.locator('input[name=new-user-email]').inputValue()).resolves.toBe('');
    // The next user without retyping a password: refused, nothing is created.
    await page.fill('input[name=new-user-email]', 'second@forms.example');
    await page.click('button:text-is("Create user")');
    await expect(page.locator('section[aria-labelledby=users-h] > [role=alert]').textContent()).resolves.toContain('Type a password for the new user');
    const users = async () => {
      const list = await projectCall<{ users: Array<{ email: string; has_password: boolean }> }>(p, 'GET', '/auth/users', { key: p.secretKey });
      return Object.fromEntries(list.body.users.map((u) => [u.email, u.has_password]));
    };
    expect(await users()).toEqual({ 'first@forms.example': true });
    // A password-less user is a choice: "No password".
    await page.check('input[name=new-user-no-password]');
    await page.click('button:text-is("Create user")');
    await page.waitForSelector('td:text-is("second@forms.example")');
    await expect(page.locator('input[name=new-user-no-password]').isChecked()).resolves.toBe(false);
    expect(await users()).toEqual({ 'first@forms.example': true, 'second@forms.example': false });
    const signIn = (email: string) => projectCall(p, 'POST', '/auth/signin', { key: p.publicKey, body: { email, password: PASSWORD } });
    expect((await signIn('second@forms.example')).status).toBe(401);
    expect((await signIn('first@forms.example')).status).toBe(200);
  });

  it('"New record" after a failed create starts from an empty form', async () => {
    await go('Records');
    await page.selectOption('section[aria-labelledby=records-h] label:has-text("Collection") select', 'items');
    await page.waitForSelector('h1:text-is("Records of items")');
    await page.click('button:text-is("New record")');
    await page.fill('input[name=record-n]', '7');
    await page.fill('input[name=record-tags]', '["x"]');
    await page.click('button:text-is("Create record")');
    await expect(page.locator('[role=alert]').textContent()).resolves.toContain('400');
    await page.click('button:text-is("New record")');
    await expect(page.locator('input[name=record-n]').inputValue()).resolves.toBe('');
    await expect(page.locator('input[name=record-tags]').inputValue()).resolves.toBe('');
    await expect(page.locator('form[aria-label="New record"] [role=alert]').count()).resolves.toBe(0);
    await page.click('form[aria-label="New record"] button:text-is("Cancel")');
  });

  it('"Retry my changes" after a 409 saves them over the current version at once', async () => {
    const made = await projectCall<{ record: { id: string } }>(p, 'POST', '/collections/items/records', { key: p.secretKey, body: { data: { title: 'original', n: 1 } } });
    const id = made.body.record.id;
    await page.click('button:text-is("Apply")');
    const row = page.locator(`tr:has(td:text-is("${id}"))`);
    await row.locator('button:text-is("Edit")').click();
    const meanwhile = await projectCall(p, 'PATCH', `/collections/items/records/${id}`, { key: p.secretKey, body: { data: { title: 'changed elsewhere' } } });
    expect(meanwhile.status).toBe(200);
    await page.fill('input[name=record-title]', 'mine');
    await page.click('button:text-is("Save record")');
    await page.waitForSelector('[aria-label="Current record"]');
    await page.click('button:text-is("Retry my changes on version 2")');
    await page.waitForSelector('td:text-is("mine")');
    const after = await projectCall<{ record: { title: string; version: number } }>(p, 'GET', `/collections/items/records/${id}`, { key: p.secretKey });
    expect(after.body.record).toMatchObject({ title: 'mine', version: 3 });
  });

  it('no screen is wider than a 375 px phone, and no header or button is split inside a word', async () => {
    for (let i = 0; i < 30; i += 1) {
      await projectCall(p, 'POST', '/collections/items/records', {
        key: p.secretKey,
        body: { data: { title: `a rather long title that does not fit on a phone, number ${i}`, n: i, tags: ['one', 'two', 'three', 'four'] } },
      });
    }
    // A provider row in the Users screen's providers table, with a long client id.
    const provider = await projectCall(p, 'PATCH', '/settings/auth', {
      key: p.secretKey,
      body: { providers: { github: { enabled: true, client_id: 'Iv1.a-rather-long-client-id-of-a-github-app-0123456789abcdef', client_secret: 'not shown' } } },
    });
    expect(provider.status).toBe(200);
    fs.mkdirSync(SHOTS, { recursive: true });
    await page.setViewportSize({ width: 375, height: 800 });
    const overflow: string[] = [];
    const broken: string[] = [];
    for (const screen of ['Collections', 'Records', 'Rule simulator', 'Users', 'Mail', 'Live']) {
      await go(screen);
      await page.waitForSelector('main h1');
      if (screen === 'Records') {
        await page.selectOption('section[aria-labelledby=records-h] label:has-text("Collection") select', 'items');
        await page.waitForSelector('tbody tr');
        // The API preview and a cell edited in place must fit too.
        await page.click('button:text-is("API preview")');
        await page.locator('tbody tr td[data-field=title]').first().dblclick();
        await page.waitForSelector('input[name=cell-title]');
      }
      await page.screenshot({ path: path.join(SHOTS, `narrow-${screen.toLowerCase().replace(/ /g, '-')}.png`), fullPage: true });
      const widths = (await page.evaluate('[document.documentElement.scrollWidth, document.documentElement.clientWidth]')) as [number, number];
      if (widths[0] > Math.min(widths[1], 375)) overflow.push(`${screen}: ${widths[0]} > ${widths[1]}`);
      // A header or button split inside a word ("Del|ete", "Na|me") takes more lines than it has words.
      const split = (await page.evaluate(`[...document.querySelectorAll('main th, main button')].filter((el) => {
        const words = el.textContent.trim().split(/\\s+/).filter(Boolean).length;
        const range = document.createRange();
        range.selectNodeContents(el);
        const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
        return words > 0 && lines > words;
      }).map((el) => el.textContent.trim())`)) as string[];
      if (split.length) broken.push(`${screen}: ${split.join(', ')}`);
    }
    expect(overflow).toEqual([]);
    expect(broken).toEqual([]);
  });
});
