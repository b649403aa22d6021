import type { Page } from 'playwright-core';

/** Signs the dashboard at `${base}/_/` in with a project's secret key and waits for its nav link `landing`. */
export async function signInToDashboard(page: Page, base: string, project: { id: string; secretKey: string }, landing: string): Promise<void> {
  await page.goto(`${base}/_/`);
  await page.fill('input[name=key]', project.secretKey);
  await page.fill('input[name=project]', project.id);
  await page.click('button[type=submit]');
  await page.waitForSelector(`header nav a:text-is("${landing}")`);
}
