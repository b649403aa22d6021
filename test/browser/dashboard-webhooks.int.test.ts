/**
 * The dashboard's Webhooks screen in headless Chromium against a standalone Plinth, signed in
 * with the project's secret key: a webhook with its deliveries, a dead letter replayed with the
 * Replay button and then delivered to a real receiver.
 */
import type { Page } from 'playwright-core';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { startWebhookReceiver, TEST_WEBHOOK_ENV, type WebhookReceiver } from '@plinth/testing/webhook-receiver';
import { projectCall, type ProjectAccess } from '../e2e/support/api';
import { openDashboard } from './support/dashboard-sign-in';
import type { LaunchedChromium } from './support/chromium';

describe('dashboard webhooks in headless Chromium', () => {
  let t: TestPlinth;
  let chromium: LaunchedChromium;
  let page: Page;
  let p: ProjectAccess;
  let r: WebhookReceiver;

  beforeAll(async () => {
    t = await startTestPlinth({
      env: { ...TEST_WEBHOOK_ENV, PLINTH_WEBHOOK_RETRY_WINDOW_MS: '60' },
    });
    r = await startWebhookReceiver();
    const base = await t.url();
    p = { url: base, id: t.project.id, publicKey: t.project.publicKey, secretKey: t.project.secretKey };
    expect((await projectCall(p, 'POST', '/collections', { key: p.secretKey, body: { name: 'orders', fields: { n: { type: 'integer' } } } })).status).toBe(201);
    ({ chromium, page } = await openDashboard(base, p, 'Webhooks'));
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
    await r?.close();
    await t?.close();
  });

  it('lists a webhook, its dead letter, and replays it with the Replay button', async () => {
    r.answer(500);
    const hook = await projectCall<{ webhook: { id: string } }>(p, 'POST', '/webhooks', { key: p.secretKey, body: { url: r.url, events: ['record.created'] } });
    expect(hook.status).toBe(201);
    expect((await projectCall(p, 'POST', '/collections/orders/records', { key: p.secretKey, body: { data: { n: 1 } } })).status).toBe(201);
    // Dead after its three attempts.
    for (let i = 0; i < 200; i++) {
      const dead = await projectCall<{ deliveries: unknown[] }>(p, 'GET', `/webhooks/${hook.body.webhook.id}/deliveries?status=dead`, { key: p.secretKey });
      if (dead.body.deliveries.length === 1) break;
      await new Promise((res) => setTimeout(res, 50));
    }
    await page.click('header nav a:text-is("Webhooks")');
    await page.waitForSelector('h1:text-is("Webhooks")');
    await page.waitForSelector(`summary:has-text("${r.url}")`);
    const replay = page.locator('button[aria-label^="Replay delivery"]');
    await replay.waitFor();
    expect(await page.locator(`ul[aria-label="Dead letters of ${r.url}"] li`).allTextContents()).toEqual([expect.stringContaining('record.created')]);
    r.answer(200);
    await replay.click();
    await r.until((got) => got.some((g) => g.status === 200));
    // Refresh until the delivery shows as delivered.
    for (let i = 0; i < 50; i++) {
      await page.click('button:text-is("Refresh")');
      if ((await page.locator(`ul[aria-label="Deliveries of ${r.url}"] li:has-text("delivered")`).count()) === 1) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    await page.waitForSelector(`ul[aria-label="Deliveries of ${r.url}"] li:has-text("delivered")`);
    await page.waitForSelector('text=No dead letters.');
  });
});
