/**
 * The dashboard's sign-in providers in headless Chromium against a standalone Plinth: a provider
 * is configured with a write-only secret (never shown again, kept when the field is left empty),
 * the other Auth settings still save, and a user's linked identities are shown.
 */
import type { Page } from 'playwright-core';
import { freePort } from '@plinth/testing/free-port';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { enableAuth, projectCall, type ProjectAccess } from '../e2e/support/api';
import { TestOpenIdProvider } from '../oauth/support/openid-provider';
import { loginAtProvider } from '../oauth/support/provider-login';
import { launchChromium, type LaunchedChromium } from './support/chromium';
import { signInToDashboard } from './support/dashboard-sign-in';

const SECRET = 'dashboard-provider-secret-value';
const APP = 'http://app.example/signed-in';

describe('dashboard: sign-in providers and identities', () => {
  let t: TestPlinth;
  let op: TestOpenIdProvider;
  let chromium: LaunchedChromium;
  let page: Page;
  let p: ProjectAccess;
  const bodies: string[] = [];

  beforeAll(async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    op = await TestOpenIdProvider.start();
    t = await startTestPlinth({ env: { PLINTH_BCRYPT_COST: '4', PLINTH_PUBLIC_URL: base, PLINTH_OAUTH_ALLOW_HTTP: 'true' }, gatewayPort: port });
    await t.url();
    p = { url: base, id: t.project.id, publicKey: t.project.publicKey, secretKey: t.project.secretKey };
    await enableAuth(p);
    await op.registerClient({ client_id: 'dash-client', client_secret: SECRET, redirect_uris: [`${base}/v1/projects/${p.id}/auth/oauth/callback`] });
    chromium = await launchChromium({ width: 1280, height: 900 });
    page = await chromium.browser.newPage();
    page.setDefaultTimeout(8000);
    page.on('response', (r) => {
      if (r.url().includes('/settings/auth')) void r.text().then((b) => bodies.push(b), () => {});
    });
    await signInToDashboard(page, base, p, 'Users');
    await page.click('header nav a:text-is("Users")');
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
    await t?.close();
    await op?.close();
  });

  it('configures a provider: the secret is written, never shown, and kept when the field is left empty', async () => {
    await page.fill('input[name=provider_name]', 'acme');
    await page.fill('input[name=client_id]', 'dash-client');
    await page.fill('input[name=client_secret]', SECRET);
    await page.fill('input[name=issuer]', op.issuer);
    await page.click('button:text-is("Save provider")');
    await page.waitForSelector('table[aria-label="Sign-in providers"] td:text-is("acme")');
    await expect(page.locator('table[aria-label="Sign-in providers"] td:text-is("set")').count()).resolves.toBe(1);
    await expect(page.locator('input[name=client_secret]').inputValue()).resolves.toBe('');
    await page.fill('textarea[name=redirect_urls]', APP);
    await page.click('button:text-is("Save redirect URLs")');
    await page.waitForSelector('[role=status]:text-is("Redirect URLs saved.")');
    // Edit without a secret: the stored one stays.
    await page.click('table[aria-label="Sign-in providers"] button:text-is("Edit")');
    await page.click('button:text-is("Save provider")');
    await page.waitForSelector('[role=status]:text-is("Provider acme saved.")');
    // The other settings still save (the providers are not sent back with them).
    await page.click('button:text-is("Save auth settings")');
    await page.waitForSelector('section[aria-labelledby=auth-settings-h] [role=status]');
    expect(await page.content()).not.toContain(SECRET);
    expect(bodies.join('\n')).not.toContain(SECRET);
    const settings = await projectCall<{ providers: { acme: { client_secret_set: boolean } } }>(p, 'GET', '/settings/auth', { key: p.secretKey });
    expect(settings.body.providers.acme.client_secret_set).toBe(true);
  });

  it('shows a user\'s linked identities', async () => {
    const start = await fetch(`${p.url}/v1/projects/${p.id}/auth/oauth/acme/start?redirect_to=${encodeURIComponent(APP)}`, { redirect: 'manual' });
    expect(start.status).toBe(302);
    const cookie = (start.headers.getSetCookie()[0] ?? '').split(';')[0] ?? '';
    const back = await fetch(await loginAtProvider(start.headers.get('location') ?? '', 'dash-user'), { redirect: 'manual', headers: { cookie } });
    expect(back.headers.get('location')).toContain('code=');
    await page.reload();
    await page.click('header nav a:text-is("Users")');
    await page.click('button[aria-label^="View dash-user@example.com"]');
    await page.waitForSelector('[aria-label="Linked identities"] li');
    await expect(page.locator('[aria-label="Linked identities"] li').textContent()).resolves.toContain('acme: dash-user@example.com (verified by the provider)');
  });
});
