/**
 * The hosted action pages in a real headless Chromium (Debian's `chromium`, driven by
 * playwright-core with the system executable; nothing downloads a browser). A standalone Plinth
 * listens on a real port that is also its PLINTH_PUBLIC_URL, so the links in the dev mailbox are
 * opened exactly as a user would open them from the mail.
 */
import http from 'node:http';
import type { BrowserContext, Page } from 'playwright-core';
import { waitFor } from '@plinth/shared/testing/wait-for';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { call, enableAuth, projectCall, type ProjectAccess, type UserBody } from '../e2e/support/api';
import { freePort } from '@plinth/testing/free-port';
import { launchChromium, type LaunchedChromium } from './support/chromium';

const PASSWORD = 'browser suite password';
const NEW_PASSWORD = 'chosen in the browser';

interface MailboxMessage {
  id: string;
  kind: string;
  text: string;
}

describe('hosted action pages in headless Chromium', () => {
  let t: TestPlinth;
  let server: http.Server;
  let browser: BrowserContext;
  let chromium: LaunchedChromium;
  let p: ProjectAccess;
  let page: Page;

  beforeAll(async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    t = await startTestPlinth({ env: { PLINTH_PUBLIC_URL: base, PLINTH_MAIL_POLL_MS: '20' } });
    server = http.createServer(t.app as http.RequestListener);
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
    p = { url: base, id: t.project.id, publicKey: t.project.publicKey, secretKey: t.project.secretKey };
    await enableAuth(p, { send_verification_on_signup: true });
    chromium = await launchChromium();
    browser = chromium.browser;
  }, 60_000);

  beforeEach(async () => {
    page = await browser.newPage();
  });
  afterEach(async () => {
    await page?.close();
  });

  afterAll(async () => {
    await chromium?.close();
    if (server) {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
    await t?.close();
  });

  /** The link of the newest mail of `kind` to `to` in the dev mailbox. */
  async function linkFromMailbox(to: string, kind: string): Promise<string> {
    const mail = await waitFor(`a ${kind} mail to ${to}`, async () => {
      const res = await projectCall<{ messages: MailboxMessage[] }>(p, 'GET', `/mailbox?to=${encodeURIComponent(to)}`, { key: p.secretKey });
      return res.body.messages.find((m) => m.kind === kind);
    });
    const link = /https?:\/\/\S+type=[a-z-]+/.exec(mail.text)?.[0];
    if (!link) throw new Error(`no link in the ${kind} mail`);
    return link;
  }

  const signIn = (email: string, password: string) => call(p.url, 'POST', `/v1/projects/${p.id}/auth/signin`, { key: p.publicKey, body: { email, password } });

  it('reset: open the link from the mail, type the new password twice, and the new password signs in', async () => {
    expect((await projectCall(p, 'POST', '/auth/signup', { key: p.publicKey, body: { email: 'rita@example.com', password: PASSWORD } })).status).toBe(201);
    expect((await projectCall(p, 'POST', '/auth/password/forgot', { key: p.publicKey, body: { email: 'rita@example.com' } })).status).toBe(200);
    const link = await linkFromMailbox('rita@example.com', 'reset');
    expect(link.startsWith(`${p.url}/v1/projects/${p.id}/auth/action?`)).toBe(true);

    const res = await page.goto(link);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toContain("default-src 'none'");
    await expect(page.locator('h1').textContent()).resolves.toBe('Choose a new password');

    await page.fill('#password', NEW_PASSWORD);
    await page.fill('#confirm', 'something else entirely');
    await page.click('button[type=submit]');
    await expect(page.locator('[role=alert]').textContent()).resolves.toContain('differ');
    expect(await page.content()).not.toContain(NEW_PASSWORD);

    await page.fill('#password', NEW_PASSWORD);
    await page.fill('#confirm', NEW_PASSWORD);
    await page.click('button[type=submit]');
    await expect(page.locator('h1').textContent()).resolves.toBe('Password changed');

    expect((await signIn('rita@example.com', NEW_PASSWORD)).status).toBe(200);
    expect((await signIn('rita@example.com', PASSWORD)).status).toBe(401);

    // The same link again: a clear failure, not a JSON error.
    await page.goto(link);
    await page.fill('#password', 'a third password');
    await page.fill('#confirm', 'a third password');
    await page.click('button[type=submit]');
    await expect(page.locator('h1').textContent()).resolves.toBe('Link not valid');
  });

  it('verify: the link opens a page whose button confirms the e-mail (opening the link alone changes nothing)', async () => {
    const signup = await projectCall<{ access_token: string }>(p, 'POST', '/auth/signup', { key: p.publicKey, body: { email: 'vera@example.com', password: PASSWORD } });
    const link = await linkFromMailbox('vera@example.com', 'verify');
    await page.goto(link);
    await expect(page.locator('h1').textContent()).resolves.toBe('Confirm your e-mail address');
    const me = () => projectCall<{ user: UserBody }>(p, 'GET', '/auth/user', { key: p.publicKey, userToken: signup.body.access_token });
    expect((await me()).body.user.email_verified).toBe(false);
    // Whoever created the account types its password: it keeps the password and the sessions.
    await page.fill('#password', PASSWORD);
    await page.click('button[type=submit]');
    await expect(page.locator('h1').textContent()).resolves.toBe('E-mail address confirmed');
    expect((await me()).body.user).toMatchObject({ email_verified: true, has_password: true });
  });

  it('e-mail change: the link to the new address confirms the change', async () => {
    const signup = await projectCall<{ access_token: string }>(p, 'POST', '/auth/signup', { key: p.publicKey, body: { email: 'carl@example.com', password: PASSWORD } });
    const asked = await projectCall(p, 'POST', '/auth/email/change', {
      key: p.publicKey, userToken: signup.body.access_token, body: { new_email: 'carl.new@example.com', password: PASSWORD },
    });
    expect(asked.status).toBe(200);
    await page.goto(await linkFromMailbox('carl.new@example.com', 'email-change'));
    await page.fill('#password', PASSWORD);
    await page.click('button[type=submit]');
    await expect(page.locator('h1').textContent()).resolves.toBe('E-mail address changed');
    expect((await signIn('carl.new@example.com', PASSWORD)).status).toBe(200);
  });

  it('e-mail change: the link in the notice to the old address cancels the change', async () => {
    const signup = await projectCall<{ access_token: string }>(p, 'POST', '/auth/signup', { key: p.publicKey, body: { email: 'dora@example.com', password: PASSWORD } });
    await projectCall(p, 'POST', '/auth/email/change', {
      key: p.publicKey, userToken: signup.body.access_token, body: { new_email: 'dora.new@example.com', password: PASSWORD },
    });
    const change = await linkFromMailbox('dora.new@example.com', 'email-change');
    await page.goto(await linkFromMailbox('dora@example.com', 'email-changed'));
    await expect(page.locator('h1').textContent()).resolves.toBe('Cancel the change of your e-mail address');
    await page.click('button[type=submit]');
    await expect(page.locator('h1').textContent()).resolves.toBe('E-mail change cancelled');
    const token = new URL(change).searchParams.get('token');
    const confirm = await projectCall(p, 'POST', '/auth/email/confirm', { key: p.publicKey, body: { token } });
    expect(confirm.status).toBe(400);
  });

  it('no inline script runs and nothing is loaded from elsewhere', async () => {
    const res = await page.goto(`${p.url}/v1/projects/${p.id}/auth/action?type=reset&token=x%22%3E%3Cscript%3Ealert(1)%3C/script%3E`);
    expect(res?.status()).toBe(200);
    expect(await page.locator('script').count()).toBe(0);
    const csp = res?.headers()['content-security-policy'] ?? '';
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("form-action 'self'");
    // The one inline style block is allowed by its hash: the page is styled.
    // (A string, so the Node-side type check needs no DOM library.)
    expect(await page.evaluate('getComputedStyle(document.body).maxWidth')).toBe('448px');
  });
});
