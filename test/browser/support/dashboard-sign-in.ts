import type { Page } from 'playwright-core';
import { launchChromium, type LaunchedChromium } from './chromium';

/** Signs the dashboard at `${base}/_/` in with a project's secret key and waits for its nav link `landing`. */
export async function signInToDashboard(page: Page, base: string, project: { id: string; secretKey: string }, landing: string): Promise<void> {
  await page.goto(`${base}/_/`);
  await page.fill('input[name=key]', project.secretKey);
  await page.fill('input[name=project]', project.id);
  await page.click('button:text-is("Sign in with key")');
  await page.waitForSelector(`header nav a:text-is("${landing}")`);
}

/** Signs the dashboard in as a named operator (e-mail, password, a code when enrolled) and waits for the Projects screen. */
export async function signInAsOperator(page: Page, base: string, operator: { email: string; password: string; code?: string }): Promise<void> {
  await page.goto(`${base}/_/`);
  await page.fill('input[name=email]', operator.email);
  await page.fill('input[name=password]', operator.password);
  if (operator.code) await page.fill('input[name=code]', operator.code);
  await page.click('button:text-is("Sign in")');
  await page.waitForSelector('h1:text-is("Projects")');
}

/**
 * Headless Chromium with one page (waits bounded to 8 s), signed in to the dashboard at `base`
 * with the project's secret key, on its nav link `landing`. The caller closes `chromium`.
 */
export async function openDashboard(
  base: string,
  project: { id: string; secretKey: string },
  landing: string,
  viewport = { width: 1280, height: 800 },
): Promise<{ chromium: LaunchedChromium; page: Page }> {
  const chromium = await launchChromium(viewport);
  try {
    const page = await chromium.browser.newPage();
    page.setDefaultTimeout(8000);
    await signInToDashboard(page, base, project, landing);
    return { chromium, page };
  } catch (err) {
    await chromium.close();
    throw err;
  }
}
