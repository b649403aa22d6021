/**
 * The dashboard's file fields in headless Chromium against a standalone Plinth signed in with
 * the secret key: an image and a text file chosen in the record form are uploaded with the
 * record; the table then previews the image (its thumbnail at the field's first size, fetched
 * with the dashboard's credential, never a token in a URL) and the text file's link saves it.
 */
import fs from 'node:fs';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { projectCall, type ProjectAccess } from '../e2e/support/api';
import { openDashboard } from './support/dashboard-sign-in';
import type { LaunchedChromium } from './support/chromium';

describe('dashboard file fields in headless Chromium', () => {
  let t: TestPlinth;
  let chromium: LaunchedChromium;
  let page: Page;
  let p: ProjectAccess;
  let png: Buffer;

  beforeAll(async () => {
    t = await startTestPlinth();
    const base = await t.url();
    p = { url: base, id: t.project.id, publicKey: t.project.publicKey, secretKey: t.project.secretKey };
    const photos = {
      name: 'photos',
      fields: { title: { type: 'text' }, image: { type: 'file', mime_types: ['image/*'], thumbs: ['32x32'] }, notes: { type: 'file' } },
    };
    expect((await projectCall(p, 'POST', '/collections', { key: p.secretKey, body: photos })).status).toBe(201);
    png = await sharp({ create: { width: 120, height: 80, channels: 3, background: { r: 200, g: 30, b: 30 } } }).png().toBuffer();
    ({ chromium, page } = await openDashboard(base, p, 'Collections'));
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
    await t?.close();
  });

  it('uploads an image and a text file with a new record, previews the image and links the text', async () => {
    await page.click('header nav a:text-is("Records")');
    await page.selectOption('section[aria-labelledby=records-h] label:has-text("Collection") select', 'photos');
    await page.waitForSelector('h1:text-is("Records of photos")');
    await page.click('button:text-is("New record")');
    await page.fill('input[name=record-title]', 'red square');
    await page.setInputFiles('input[name=record-image]', { name: 'red.png', mimeType: 'image/png', buffer: png });
    await page.setInputFiles('input[name=record-notes]', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello from the dashboard') });
    await page.click('button:text-is("Create record")');

    // The preview is a real image the browser decoded: the 32x32 thumbnail, as a data: URL.
    const img = page.locator('img.file-preview[alt="red.png"]');
    await img.waitFor();
    type Img = { complete: boolean; naturalWidth: number; naturalHeight: number };
    await page.waitForFunction((el) => (el as unknown as Img).complete && (el as unknown as Img).naturalWidth > 0, await img.elementHandle());
    expect(await img.evaluate((el) => [(el as unknown as Img).naturalWidth, (el as unknown as Img).naturalHeight])).toEqual([32, 32]);
    expect(await img.getAttribute('src')).toMatch(/^data:image\/png;base64,/);
    expect(await page.content()).not.toContain('token=');

    // The text file is a link that saves its bytes under the original name.
    const link = page.locator('a:text-is("notes.txt")');
    expect(await link.getAttribute('href')).toMatch(/\/files\/photos\/rec_[^/]+\/notes_[a-z0-9]{10}\.txt$/);
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    expect(download.suggestedFilename()).toBe('notes.txt');
    expect(fs.readFileSync((await download.path()) as string, 'utf8')).toBe('hello from the dashboard');

    const stored = await projectCall<{ records: Array<{ title: string; image: { type: string; size: number }; notes: { type: string } }> }>(p, 'GET', '/collections/photos/records', { key: p.secretKey });
    expect(stored.body.records).toHaveLength(1);
    expect(stored.body.records[0]).toMatchObject({ title: 'red square', image: { type: 'image/png', size: png.length }, notes: { type: 'text/plain' } });
  });
});
