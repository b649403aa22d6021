/**
 * The dashboard's Users screen shows a user's second factors and lets the operator reset them
 * (a lost authenticator), in headless Chromium against a standalone Plinth on a real port,
 * signed in with the project's secret key.
 */
import { Secret, TOTP } from 'otpauth';
import type { Page } from 'playwright-core';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { enableAuth, projectCall, type ProjectAccess, type SessionBody } from '../e2e/support/api';
import { openDashboard } from './support/dashboard-sign-in';
import type { LaunchedChromium } from './support/chromium';

const EMAIL = 'two-factor@dashboard.example';
const PASSWORD = 'dashboard two factor password';

describe('dashboard: a user\'s second factors', () => {
  let t: TestPlinth;
  let chromium: LaunchedChromium;
  let page: Page;
  let p: ProjectAccess;

  beforeAll(async () => {
    t = await startTestPlinth({ env: { PLINTH_BCRYPT_COST: '4' } });
    const base = await t.url();
    p = { url: base, id: t.project.id, publicKey: t.project.publicKey, secretKey: t.project.secretKey };
    await enableAuth(p, { send_verification_on_signup: false });
    const up = await projectCall<SessionBody>(p, 'POST', '/auth/signup', { key: p.publicKey, body: { email: EMAIL, password: PASSWORD } });
    const token = up.body.access_token;
    const enroll = await projectCall<{ secret: string }>(p, 'POST', '/auth/mfa/totp/enroll', { key: p.publicKey, userToken: token });
    const code = TOTP.generate({ secret: Secret.fromBase32(enroll.body.secret) });
    const confirm = await projectCall(p, 'POST', '/auth/mfa/totp/confirm', { key: p.publicKey, userToken: token, body: { code } });
    expect(confirm.status).toBe(200);
    ({ chromium, page } = await openDashboard(base, p, 'Users'));
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
    await t?.close();
  });

  it('shows the active TOTP factor with its recovery codes left, and the reset turns two-factor sign-in off', async () => {
    expect((await projectCall(p, 'POST', '/auth/signin', { key: p.publicKey, body: { email: EMAIL, password: PASSWORD } })).status).toBe(401);
    await page.click('header nav a:text-is("Users")');
    await page.click(`button[aria-label="View ${EMAIL}"]`);
    const factors = page.locator('[role=group][aria-label="Second factors"]');
    await factors.locator('td:text-is("active")').waitFor();
    await expect(factors.locator('tbody tr').count()).resolves.toBe(1);
    await expect(factors.locator('tbody td').nth(3).textContent()).resolves.toBe('10');
    await page.click(`button[aria-label="Reset two-factor sign-in of ${EMAIL}"]`);
    await factors.locator(`[role=status]:has-text("Two-factor sign-in of ${EMAIL} reset.")`).waitFor();
    await factors.locator('p:has-text("No second factor")').waitFor();
    const signIn = await projectCall<SessionBody>(p, 'POST', '/auth/signin', { key: p.publicKey, body: { email: EMAIL, password: PASSWORD } });
    expect(signIn.status).toBe(200);
  });
});
