/**
 * The admin dashboard at /_/ in a real headless Chromium (Debian's `chromium`, driven by
 * playwright-core with the system executable; nothing downloads a browser), against a standalone
 * Plinth listening on a real port (with WebSocket upgrades). One person's session, screen after screen: sign in with the
 * operator key, a project and a key, a collection with owner-only rules (a typo flagged at its
 * position), records (create, edit with a 409, paging, delete), the rule simulator, users.
 * Screenshots of each screen go to test-artifacts/dashboard/ (git-ignored).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { call, projectCall, type ProjectAccess } from '../e2e/support/api';
import { launchChromium, type LaunchedChromium } from './support/chromium';

const SHOTS = path.resolve(__dirname, '../../test-artifacts/dashboard');
const PROJECT = 'dash-e2e';
const PASSWORD = 'dashboard suite password';
const OWNER_ONLY = {
  read: 'auth != null && record.owner == auth.uid',
  create: 'auth != null && data.owner == auth.uid',
  update: 'record.owner == auth.uid && data.owner == record.owner',
  delete: 'record.owner == auth.uid',
};

describe('the admin dashboard in headless Chromium', () => {
  let t: TestPlinth;
  let browser: BrowserContext;
  let chromium: LaunchedChromium;
  let page: Page;
  let base: string;
  const cspViolations: string[] = [];
  let p: ProjectAccess;
  const users: { [name: string]: { id: string; email: string } } = {};

  // Keys shown once are masked: screenshots may end up in docs.
  const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), mask: [page.locator('.shown-once input')] });
  /** Polls a page expression until it is true (bounded). The CSP forbids eval, so no waitForFunction. */
  async function until(expr: string): Promise<void> {
    for (let i = 0; i < 80; i++) {
      if (await page.evaluate(expr)) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`never true: ${expr}`);
  }
  const go = (screen: string) => page.click(`header nav a:text-is("${screen}")`);

  beforeAll(async () => {
    t = await startTestPlinth({ env: { PLINTH_MAIL_POLL_MS: '20' } });
    // A real port with WebSocket upgrades (the Live screen), closed by t.close().
    base = await t.url();
    fs.mkdirSync(SHOTS, { recursive: true });
    chromium = await launchChromium({ width: 1280, height: 800 });
    browser = chromium.browser;
    page = await browser.newPage();
    page.setDefaultTimeout(8000);
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
    });
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
    await t?.close();
  });

  it('signs in with the operator key, by keyboard, under a strict CSP; the key stays out of the URL', async () => {
    const res = await page.goto(`${base}/_/`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toContain("default-src 'self'");
    expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
    await shot('01-sign-in');
    await page.locator('input[name=key]').focus();
    await page.keyboard.type('not the key');
    await page.keyboard.press('Enter');
    await expect(page.locator('[role=alert]').textContent()).resolves.toContain('401 unauthorized');
    await page.locator('input[name=key]').fill('');
    await page.locator('input[name=key]').focus();
    await page.keyboard.type(t.adminKey);
    await page.keyboard.press('Enter');
    await page.waitForSelector('h1:text-is("Projects")');
    expect(page.url()).not.toContain(t.adminKey);
    expect(await page.evaluate('localStorage.length')).toBe(0);
  });

  it('creates a project (its keys shown once) and a key, and revokes it', async () => {
    await page.fill('input[name=project-id]', PROJECT);
    await page.click('button:text-is("Create project")');
    const secret = await page.locator('[aria-label="New project keys"] input').nth(1).inputValue();
    const publicKey = await page.locator('[aria-label="New project keys"] input').nth(0).inputValue();
    expect(secret).toMatch(/^sk_/);
    expect(publicKey).toMatch(/^pk_/);
    p = { url: base, id: PROJECT, publicKey, secretKey: secret };
    await page.click(`tr:has(td:text-is("${PROJECT}")) button:text-is("Keys")`);
    await page.selectOption(`[aria-label="Keys of ${PROJECT}"] select`, 'public');
    await page.click('button:text-is("Create key")');
    const fresh = await page.locator('.shown-once:has-text("New public key") input').inputValue();
    expect(fresh).toMatch(/^pk_/);
    expect((await projectCall(p, 'GET', '/collections', { key: fresh })).status).toBe(200);
    await expect(page.locator(`[aria-label="Keys of ${PROJECT}"] li`).count()).resolves.toBe(3);
    await shot('02-projects-and-keys');
    await page.click(`[aria-label="Revoke key ${fresh.slice(0, 8)}"]`);
    await until("document.querySelectorAll('.keys li').length === 2");
    expect((await projectCall(p, 'GET', '/collections', { key: fresh })).status).toBe(401);
  });

  it('enables Auth and creates two users on the Users screen', async () => {
    await page.click(`tr:has(td:text-is("${PROJECT}")) a:text-is("Open")`);
    await go('Users');
    await page.check('input[name=enabled]');
    await page.click('button:text-is("Save auth settings")');
    await page.waitForSelector('text=Saved.');
    for (const name of ['ada', 'bob']) {
      await page.fill('input[name=new-user-email]', `${name}@dash.example`);
      await page.fill('input[name=new-user-password]', PASSWORD);
      await page.click('button:text-is("Create user")');
      await page.waitForSelector(`td:text-is("${name}@dash.example")`);
    }
    const list = await projectCall<{ users: { id: string; email: string }[] }>(p, 'GET', '/auth/users', { key: p.secretKey });
    for (const u of list.body.users) users[u.email.split('@')[0] as string] = u;
    expect(Object.keys(users).sort()).toEqual(['ada', 'bob']);
  });

  it('allows anonymous sign-in from the Auth settings; an anonymous user is listed as such, without a reset button', async () => {
    const anonymous = () => call(base, 'POST', `/v1/projects/${PROJECT}/auth/anonymous`, { key: p.publicKey });
    expect((await anonymous()).status).toBe(403);
    await page.check('input[name=allow_anonymous]');
    await page.click('button:text-is("Save auth settings")');
    await page.waitForSelector('text=Saved.');
    const signedIn = await anonymous();
    expect(signedIn.status).toBe(201);
    const id = (signedIn.body as { user: { id: string } }).user.id;
    await go('Collections');
    await go('Users');
    await page.waitForSelector(`[aria-label="View anonymous ${id}"]`);
    expect(await page.locator(`tr:has([aria-label="View anonymous ${id}"]) td em`).textContent()).toBe('anonymous');
    expect(await page.locator(`[aria-label="Send a reset to anonymous ${id}"]`).count()).toBe(0);
  });

  it('creates a collection with owner-only rules; a typo is flagged at its position before saving', async () => {
    await go('Collections');
    await page.click('button:text-is("New collection")');
    await page.fill('input[name=collection-name]', 'notes');
    await page.fill('input[name=field-name-0]', 'owner');
    await page.check('input[name=field-required-0]');
    await page.check('input[name=field-indexed-0]');
    await page.click('button:text-is("Add field")');
    await page.fill('input[name=field-name-1]', 'body');
    const typo = 'auth != null && record.owner == auth.uidd';
    await page.fill('textarea[name=rule-read]', typo);
    const error = page.locator('#rule-read-error');
    await error.waitFor();
    const position = Number(await error.getAttribute('data-position'));
    // The API names the unknown member `uidd` of `auth`; the editor marks that character.
    expect(position).toBe(typo.indexOf('uidd'));
    await expect(error.locator('mark').textContent()).resolves.toBe('u');
    await expect(page.locator('button:text-is("Save collection")').isDisabled()).resolves.toBe(true);
    await shot('03-collections-rule-error');
    for (const [kind, rule] of Object.entries(OWNER_ONLY)) await page.fill(`textarea[name=rule-${kind}]`, rule);
    await until("document.querySelectorAll('.rule-error').length === 0 && !document.body.textContent.includes('checking…')");
    await page.click('button:text-is("Save collection")');
    await page.waitForSelector('td:text-is("notes")');
    const stored = await projectCall<{ collection: { rules: object; fields: { owner: { required: boolean; indexed: boolean } } } }>(p, 'GET', '/collections/notes', { key: p.secretKey });
    expect(stored.body.collection.rules).toEqual(OWNER_ONLY);
    expect(stored.body.collection.fields.owner).toMatchObject({ required: true, indexed: true });
    await shot('04-collections');
  });

  it('creates, pages through, edits (through a 409) and deletes records', async () => {
    await page.click('tr:has(td:text-is("notes")) a:text-is("Records")');
    await page.waitForSelector('h1:text-is("Records of notes")');
    const ada = users.ada?.id as string;
    for (const body of ['first', 'second', 'third']) {
      await page.click('button:text-is("New record")');
      await page.fill('input[name=record-owner]', ada);
      await page.fill('input[name=record-body]', body);
      await page.click('button:text-is("Create record")');
      await page.waitForSelector(`td:text-is("${body}")`);
    }
    await page.fill('input[name=limit]', '2');
    await page.click('button:text-is("Apply")');
    await until("document.querySelectorAll('tbody tr').length === 2");
    await page.click('button:text-is("Next page")');
    await page.waitForSelector('td:text-is("third")');
    await expect(page.locator('tbody tr').count()).resolves.toBe(1);
    await page.click('button:text-is("Previous page")');
    await page.waitForSelector('td:text-is("first")');
    await page.selectOption('select[name=direction]', 'desc');
    await page.click('button:text-is("Apply")');
    await until("document.querySelector('tbody tr td:nth-child(3)')?.textContent === 'third'");
    await page.selectOption('select[name=direction]', 'asc');
    await page.fill('input[name=limit]', '20');
    await page.click('button:text-is("Apply")');
    await page.waitForSelector('td:text-is("third")');

    // Edit "first" while someone else changes it: 409, the current record shown, retry on it.
    const row = page.locator('tr:has(td:text-is("first"))');
    const id = (await row.locator('td').first().textContent()) as string;
    await row.locator('button:text-is("Edit")').click();
    const meanwhile = await projectCall(p, 'PATCH', `/collections/notes/records/${id}`, { key: p.secretKey, body: { data: { body: 'changed elsewhere' } } });
    expect(meanwhile.status).toBe(200);
    await page.fill('input[name=record-body]', 'mine');
    await page.click('button:text-is("Save record")');
    await page.waitForSelector('[aria-label="Current record"]');
    await expect(page.locator('[role=alert]').textContent()).resolves.toContain('409 conflict');
    await expect(page.locator('[aria-label="Current record"]').textContent()).resolves.toContain('changed elsewhere');
    await shot('05-records-conflict');
    await page.click('button:text-is("Retry my changes on version 2")');
    await page.waitForSelector('td:text-is("mine")');
    const after = await projectCall<{ record: { body: string; version: number } }>(p, 'GET', `/collections/notes/records/${id}`, { key: p.secretKey });
    expect(after.body.record).toMatchObject({ body: 'mine', version: 3 });
    await shot('06-records');

    await page.click(`[aria-label="Delete ${id}"]`);
    await page.fill('[role=alertdialog] input', 'delete');
    await page.click('[role=alertdialog] button:text-is("Confirm")');
    await until("!document.body.textContent.includes('mine')");
    expect((await projectCall(p, 'GET', `/collections/notes/records/${id}`, { key: p.secretKey })).status).toBe(404);
  });

  it("the simulator refuses user B on A's record and allows A", async () => {
    await go('Rule simulator');
    await page.selectOption('select[name=sim-collection]', 'notes');
    await page.selectOption('select[name=sim-operation]', 'delete');
    await page.fill('textarea[name=sim-record]', JSON.stringify({ owner: users.ada?.id, body: 'second' }));
    await page.selectOption('select[name=sim-user]', users.bob?.id as string);
    await page.click('button:text-is("Simulate")');
    await expect(page.locator('[aria-label=Verdict] .big').textContent()).resolves.toBe('Refused');
    await shot('07a-simulator-refused');
    await page.selectOption('select[name=sim-user]', users.ada?.id as string);
    await page.click('button:text-is("Simulate")');
    await page.waitForSelector('[aria-label=Verdict].allowed');
    await expect(page.locator('[aria-label=Verdict] .big').textContent()).resolves.toBe('Allowed');
    await page.selectOption('select[name=sim-operation]', 'read');
    await page.fill('textarea[name=sim-record]', '');
    await page.click('button:text-is("Simulate")');
    await expect(page.locator('[aria-label="Residual predicate"]').textContent()).resolves.toContain(users.ada?.id as string);
    await shot('07-simulator');
  });

  it('Live: subscribes as A over the realtime WebSocket and shows an event as it arrives', async () => {
    await go('Live');
    await page.fill('input[name=live-key]', p.publicKey);
    await page.selectOption('select[name=live-collection]', 'notes');
    await page.selectOption('select[name=live-user]', users.ada?.id as string);
    await page.click('button:text-is("Subscribe")');
    await page.waitForSelector('.live li:has-text("subscribed:")');
    const created = await projectCall<{ record: { id: string } }>(p, 'POST', '/collections/notes/records', {
      key: p.secretKey,
      body: { data: { owner: users.ada?.id, body: 'live one' } },
    });
    expect(created.status).toBe(201);
    await page.waitForSelector(`.live li:has-text("create ${created.body.record.id}")`);
    // B's record is not A's to see: it never arrives.
    await projectCall(p, 'POST', '/collections/notes/records', { key: p.secretKey, body: { data: { owner: users.bob?.id, body: 'not for ada' } } });
    const marker = await projectCall<{ record: { id: string } }>(p, 'POST', '/collections/notes/records', {
      key: p.secretKey,
      body: { data: { owner: users.ada?.id, body: 'after' } },
    });
    await page.waitForSelector(`.live li:has-text("create ${marker.body.record.id}")`);
    await expect(page.locator('.live li:has-text("not for ada")').count()).resolves.toBe(0);
    await shot('09b-live');
    await page.click('button:text-is("Disconnect")');
    await page.waitForSelector('[aria-label=Subscribe] [role=status]:text-is("closed")');
  });

  it("disables a user, whose sign-in is then refused; mail; no layout break at 375×800", async () => {
    const signIn = () => call(base, 'POST', `/v1/projects/${PROJECT}/auth/signin`, { key: p.publicKey, body: { email: 'ada@dash.example', password: PASSWORD } });
    expect((await signIn()).status).toBe(200);
    await go('Users');
    await page.click('[aria-label="Disable ada@dash.example"]');
    await page.waitForSelector('tr:has(td:text-is("ada@dash.example")) td:text-is("disabled")');
    const refused = await signIn();
    expect(refused.status).toBe(401);
    await shot('08-users');
    await go('Mail');
    await page.waitForSelector('h2:text-is("Dev mailbox")');
    await shot('09-mail');

    for (const [screen, name] of [['Records', 'records'], ['Users', 'users'], ['Collections', 'collections'], ['Projects', 'projects']] as const) {
      await page.setViewportSize({ width: 375, height: 800 });
      await go(screen);
      await page.waitForSelector('main h1');
      if (screen === 'Records') {
        await page.selectOption('main select', 'notes');
        await page.waitForSelector('td:text-is("second")');
      }
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
      await shot(`10-narrow-${name}`);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(1280);
    expect(cspViolations).toEqual([]);
  });
});
