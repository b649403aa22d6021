/**
 * Sign-in with a provider in headless Chromium, through the gateway, in the topology the jest
 * project selects (standalone, or cluster: two auth replicas behind a gateway process). The
 * providers are real servers on local ports: oidc-provider (a certified OpenID provider, in a
 * child process) and a stand-in of GitHub's documented OAuth endpoints. The app is a page on a
 * port of its own that trades the code it is sent back with for a session.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BrowserContext, Page } from 'playwright-core';
import { freePort } from '@plinth/testing/free-port';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { TestGitHub } from '../oauth/support/github-server';
import { TestOpenIdProvider } from '../oauth/support/openid-provider';
import { enableAuth, projectCall, type ProjectAccess } from '../e2e/support/api';
import { launchChromium, type LaunchedChromium } from './support/chromium';

/** The app's page: exchanges `code` for a session (as the SDK does) and says who is signed in. */
function appPage(p: ProjectAccess): string {
  return `<!doctype html><title>App</title><p id="result">working</p><script>
    const q = new URLSearchParams(location.search);
    const out = document.getElementById('result');
    if (q.get('error')) out.textContent = 'error ' + q.get('error');
    else fetch(${JSON.stringify(`${p.url}/v1/projects/${p.id}/auth/oauth/exchange`)}, {
      method: 'POST',
      headers: { Authorization: 'Bearer ${p.publicKey}', 'Content-Type': 'application/json' },
      body: JSON.stringify({ code: q.get('code') }),
    }).then((r) => r.json()).then((s) => fetch(${JSON.stringify(`${p.url}/v1/projects/${p.id}/auth/user`)}, {
      headers: { Authorization: 'Bearer ${p.publicKey}', 'X-Auth-User-Token': s.access_token },
    })).then((r) => r.json()).then((me) => { out.textContent = 'signed in as ' + me.user.email; });
  </script>`;
}

describe('provider sign-in in headless Chromium through the gateway', () => {
  let t: TestPlinth;
  let op: TestOpenIdProvider;
  let github: TestGitHub;
  let app: http.Server;
  let appUrl: string;
  let chromium: LaunchedChromium;
  let browser: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    op = await TestOpenIdProvider.start();
    github = await TestGitHub.start();
    t = await startTestPlinth({ env: { PLINTH_PUBLIC_URL: base, PLINTH_OAUTH_ALLOW_HTTP: 'true' }, gatewayPort: port });
    expect(await t.url()).toBe(base);
    const p: ProjectAccess = { url: base, id: t.project.id, publicKey: t.project.publicKey, secretKey: t.project.secretKey };
    app = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(appPage(p)));
    await new Promise<void>((r) => app.listen(0, '127.0.0.1', r));
    appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}/signed-in`;
    await op.registerClient({ client_id: 'browser-app', client_secret: 'browser-secret', redirect_uris: [`${base}/v1/projects/${p.id}/auth/oauth/callback`] });
    github.registerClient('browser-gh', 'browser-gh-secret');
    github.users.set('octo', { id: 9001, login: 'octo', name: 'Octo', emails: [{ email: 'octo@example.com', primary: true, verified: true }] });
    await enableAuth(p);
    // Not enableAuth's settings: it expects them echoed, and provider secrets never are.
    const configured = await projectCall(p, 'PATCH', '/settings/auth', { key: p.secretKey, body: {
      redirect_urls: [appUrl],
      providers: {
        'test-op': { client_id: 'browser-app', client_secret: 'browser-secret', issuer: op.issuer },
        github: { client_id: 'browser-gh', client_secret: 'browser-gh-secret', github_url: github.webUrl, github_api_url: github.apiUrl },
      },
    } });
    expect(configured.status).toBe(200);
    chromium = await launchChromium();
    browser = chromium.browser;
  }, 120_000);

  beforeEach(async () => {
    // Each test signs in afresh at the provider (no provider session left by the one before).
    await browser.clearCookies();
    page = await browser.newPage();
  });
  afterEach(async () => {
    await page?.close();
  });

  afterAll(async () => {
    await chromium?.close();
    app?.closeAllConnections();
    await new Promise((r) => (app ? app.close(r) : r(undefined)));
    await t?.close();
    await op?.close();
    await github?.close();
  });

  async function signIn(provider: string, login: string): Promise<string[]> {
    const seen: string[] = [];
    page.on('framenavigated', (f) => {
      if (f === page.mainFrame()) seen.push(f.url());
    });
    const start = `${await t.url()}/v1/projects/${t.project.id}/auth/oauth/${provider}/start?redirect_to=${encodeURIComponent(appUrl)}`;
    await page.goto(start);
    await page.locator('input[name=login]').fill(login);
    await page.locator('button[type=submit]').click();
    await page.waitForURL((u) => u.href.startsWith(appUrl));
    return seen;
  }

  it('OpenID Connect: start → the provider\'s login page → callback → exchange → signed in', async () => {
    const seen = await signIn('test-op', 'ada');
    await page.waitForFunction("document.getElementById('result').textContent !== 'working'");
    expect(await page.locator('#result').textContent()).toBe('signed in as ada@example.com');
    expect(seen.some((u) => u.startsWith(op.issuer))).toBe(true);
    // No token ever travels in a URL: the app got a single-use code only.
    expect(new URL(page.url()).searchParams.has('code')).toBe(true);
    for (const u of seen) expect(u).not.toMatch(/access_token|refresh_token|id_token/);
  });

  it('GitHub (plain OAuth 2.0): the same flow through the GitHub stand-in', async () => {
    await signIn('github', 'octo');
    await page.waitForFunction("document.getElementById('result').textContent !== 'working'");
    expect(await page.locator('#result').textContent()).toBe('signed in as octo@example.com');
  });

  it('a browser cannot finish a sign-in another client started (state bound to the starting browser)', async () => {
    const start = `${await t.url()}/v1/projects/${t.project.id}/auth/oauth/test-op/start?redirect_to=${encodeURIComponent(appUrl)}`;
    // Started elsewhere (its binding cookie stays there); the browser is sent to the provider's page.
    const res = await fetch(start, { redirect: 'manual' });
    await page.goto(res.headers.get('location') ?? '');
    await page.locator('input[name=login]').fill('victim');
    await page.locator('button[type=submit]').click();
    await page.waitForURL((u) => u.pathname.endsWith('/auth/oauth/callback'));
    expect(await page.locator('body').textContent()).toContain('invalid_grant');
  });
});
