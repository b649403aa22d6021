/**
 * The dashboard signed in as named operators, in headless Chromium against a standalone Plinth:
 * an admin opens several projects and changes a rule — and no project key is created for it —,
 * a viewer sees the same project but their rule change is refused and shown, and the Audit page
 * lists both actions (who, what, status).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { operatorTotpCode } from '@plinth/gateway/operators/totp';
import { startTestPlinth, type TestPlinth, type TestProject } from '@plinth/testing/harness';
import { call, projectCall } from '../e2e/support/api';
import { launchChromium, type LaunchedChromium } from './support/chromium';
import { signInAsOperator } from './support/dashboard-sign-in';

const SHOTS = path.resolve(__dirname, '../../test-artifacts/dashboard');
const PASSWORD = 'dashboard operator password';
const ADMIN = { email: 'admin@dash-ops.example', password: PASSWORD };
const VIEWER = { email: 'viewer@dash-ops.example', password: PASSWORD };

describe('the dashboard as named operators (admin, viewer) in headless Chromium', () => {
  let t: TestPlinth;
  let chromium: LaunchedChromium;
  let page: Page;
  let base: string;
  const projects: TestProject[] = [];
  const boot = () => ({ key: t.adminKey });

  /** Every key of every project, as the operator API lists them. */
  async function keyCount(): Promise<number> {
    let n = 0;
    for (const p of projects) n += (await call<{ keys: unknown[] }>(base, 'GET', `/v1/admin/projects/${p.id}`, boot())).body.keys.length;
    return n;
  }
  const readRule = async () =>
    (await projectCall<{ collection: { rules: { read?: string } } }>({ url: base, ...projects[0]! }, 'GET', '/collections/notes', { key: projects[0]!.secretKey })).body.collection.rules.read;

  async function editReadRule(rule: string): Promise<void> {
    await page.click(`header nav a:text-is("Collections")`);
    await page.click('button:text-is("Edit notes")');
    await page.fill('textarea[name=rule-read]', rule);
    // The rule is checked as it is typed (a read-only call, allowed to a viewer too).
    for (let i = 0; i < 80 && (await page.locator('button:text-is("Save collection")').isDisabled()); i++) await new Promise((r) => setTimeout(r, 100));
    await page.click('button:text-is("Save collection")');
  }

  beforeAll(async () => {
    t = await startTestPlinth();
    base = await t.url();
    for (const [op, role] of [[ADMIN, 'admin'], [VIEWER, 'viewer']] as const) {
      const made = await call(base, 'POST', '/v1/admin/operators', { ...boot(), body: { ...op, role } });
      expect(made.status).toBe(201);
    }
    projects.push(t.project, await t.createProject(), await t.createProject());
    const notes = await projectCall({ url: base, ...projects[0]! }, 'POST', '/collections', {
      key: projects[0]!.secretKey,
      body: { name: 'notes', fields: { title: { type: 'text' } }, rules: { read: 'auth != null' } },
    });
    expect(notes.status).toBe(201);
    fs.mkdirSync(SHOTS, { recursive: true });
    chromium = await launchChromium({ width: 1280, height: 800 });
    page = await chromium.browser.newPage();
    page.setDefaultTimeout(8000);
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
    await t?.close();
  });

  it('an admin opens several projects — no project key is created — and changes a rule', async () => {
    const before = await keyCount();
    await signInAsOperator(page, base, ADMIN);
    expect(await page.locator('header .who').textContent()).toContain('admin@dash-ops.example (admin)');
    for (const p of projects) {
      await page.click('header nav a:text-is("Projects")');
      await page.click(`tr:has(td:text-is("${p.id}")) a:text-is("Open")`);
      await page.waitForSelector('h1:text-is("Collections")');
      await page.click('header nav a:text-is("Records")');
      await page.click('header nav a:text-is("Users")');
      await page.waitForSelector('h1');
    }
    expect(await keyCount()).toBe(before);
    expect(await page.evaluate('Object.keys(sessionStorage).join()')).toBe('plinth.session');
    await page.goto(`${base}/_/#/p/${projects[0]!.id}/collections`);
    await editReadRule('auth != null && auth.email_verified');
    await page.waitForSelector('button:text-is("Edit notes")');
    expect(await readRule()).toBe('auth != null && auth.email_verified');
    expect(await keyCount()).toBe(before);
    await page.click('header button:text-is("Sign out")');
    await page.waitForSelector('input[name=email]');
  });

  it('a viewer sees the project, but changing a rule is refused and the refusal is shown', async () => {
    const before = await keyCount();
    await signInAsOperator(page, base, VIEWER);
    expect(await page.locator('header .who').textContent()).toContain('read only');
    await page.click(`tr:has(td:text-is("${projects[0]!.id}")) a:text-is("Open")`);
    await page.waitForSelector('td:text-is("notes")');
    await editReadRule('true');
    const alert = page.locator('form[aria-label="Edit collection notes"] [role=alert]');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('403 forbidden');
    expect(await alert.textContent()).toContain('viewer');
    expect(await readRule()).toBe('auth != null && auth.email_verified');
    // The Projects screen's changes are refused too, and shown.
    await page.click('header nav a:text-is("Projects")');
    await page.fill('input[name=project-id]', 'viewer-made');
    await page.click('button:text-is("Create project")');
    await expect(page.locator('[role=alert]').first().textContent()).resolves.toContain('403 forbidden');
    expect((await call(base, 'GET', '/v1/admin/projects/viewer-made', boot())).status).toBe(404);
    expect(await keyCount()).toBe(before);
  });

  it('the Audit page shows who changed what (and the refused attempts), filtered by who', async () => {
    await page.click('header nav a:text-is("Audit")');
    const rows = page.locator('table[aria-label="Audit entries"] tbody tr');
    await rows.first().waitFor();
    const text = (await page.locator('table[aria-label="Audit entries"]').textContent()) ?? '';
    expect(text).toContain(`PATCH /v1/projects/${projects[0]!.id}/collections/notes`);
    const adminRow = page.locator(`tr:has(td:text-is("200")):has-text("admin@dash-ops.example"):has-text("PATCH /v1/projects/${projects[0]!.id}/collections/notes")`);
    await expect(adminRow.count()).resolves.toBe(1);
    const refusedRow = page.locator(`tr:has(td:text-is("403")):has-text("viewer@dash-ops.example"):has-text("PATCH /v1/projects/${projects[0]!.id}/collections/notes")`);
    await expect(refusedRow.count()).resolves.toBe(1);
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toContain(t.adminKey);
    await page.screenshot({ path: path.join(SHOTS, '11-audit.png') });
    await page.fill('input[name=audit-actor]', VIEWER.email);
    await page.click('button:text-is("Apply")');
    await page.waitForSelector('table[aria-label="Audit entries"] tbody tr:not(:has-text("viewer@dash-ops.example"))', { state: 'detached' });
    const who = await page.locator('table[aria-label="Audit entries"] tbody tr td:nth-child(2)').allTextContents();
    expect(who.length).toBeGreaterThan(0);
    expect(who.every((w) => w.includes(VIEWER.email))).toBe(true);
  });

  it('an operator with two-factor sign-in needs the code; a revoked session sends the tab back to sign-in', async () => {
    const owner = { email: 'owner@dash-ops.example', password: PASSWORD };
    await call(base, 'POST', '/v1/admin/operators', { ...boot(), body: { ...owner, role: 'owner' } });
    const first = (await call<{ token: string }>(base, 'POST', '/v1/admin/sessions', { body: owner })).body.token;
    const { secret } = (await call<{ secret: string }>(base, 'POST', '/v1/admin/me/totp', { key: first })).body;
    expect((await call(base, 'POST', '/v1/admin/me/totp/confirm', { key: first, body: { code: operatorTotpCode(secret) } })).status).toBe(200);
    await page.click('header button:text-is("Sign out")');
    await page.fill('input[name=email]', owner.email);
    await page.fill('input[name=password]', owner.password);
    await page.click('button:text-is("Sign in")');
    await expect(page.locator('[role=alert]').textContent()).resolves.toContain('two-factor');
    await signInAsOperator(page, base, { ...owner, code: operatorTotpCode(secret, Date.now() + 30_000) });
    expect(await page.locator('header .who').textContent()).toContain('owner@dash-ops.example (owner)');
    const sessions = (await call<{ sessions: Array<{ id: string; operator_id: string; address: string }> }>(base, 'GET', '/v1/admin/sessions', boot())).body.sessions;
    const me = (await call<{ operator: { id: string } }>(base, 'GET', '/v1/admin/me', { key: first })).body.operator.id;
    for (const s of sessions.filter((x) => x.operator_id === me)) await call(base, 'DELETE', `/v1/admin/sessions/${s.id}`, boot());
    await page.click('header nav a:text-is("Audit")');
    await page.waitForSelector('input[name=email]');
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
  });
});
