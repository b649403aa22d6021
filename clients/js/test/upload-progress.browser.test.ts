import type { Page } from 'playwright-core';
import { startBrowserRig, type BrowserRig } from './browser';
import { startSdkFixture, type SdkFixture } from './fixture';

const SIZE = 3 * 1024 * 1024;

/**
 * Upload progress in a real Chromium: with `onProgress`, a record create with a file goes
 * through XMLHttpRequest, whose upload events reach the callback, rising to the whole body; the
 * record then holds the file.
 */
describe('@plinth/client in a browser: upload progress', () => {
  let f: SdkFixture;
  let rig: BrowserRig;
  let page: Page;

  beforeAll(async () => {
    f = await startSdkFixture();
    await f.admin.collections.create({ name: 'uploads', fields: { blob: { type: 'file', max_size: 2 * SIZE } } });
    const html = `<!doctype html><meta charset="utf-8"><title>plinth uploads</title>
<script type="module">
  import { createRecordsClient } from '/sdk/records.js';
  const plinth = createRecordsClient({ url: location.origin, project: ${JSON.stringify(f.project)}, key: ${JSON.stringify(f.sk)} });
  const Native = XMLHttpRequest;
  window.xhrs = 0;
  window.XMLHttpRequest = class extends Native { constructor() { super(); window.xhrs++; } };
  window.upload = async (size) => {
    const events = [];
    const bytes = new Uint8Array(size);
    for (let i = 0; i < size; i += 4096) bytes[i] = i % 251;
    const record = await plinth.collection('uploads').create({}, { files: { blob: new File([bytes], 'big.bin') }, onProgress: (p) => events.push(p) });
    return { record, events };
  };
  window.ready = true;
</script>`;
    rig = await startBrowserRig(f.url, html);
    page = await rig.context.newPage();
    await page.goto(`${rig.proxy.url}/`);
    await page.waitForFunction(() => (globalThis as unknown as { ready?: boolean }).ready === true);
  }, 60_000);
  afterAll(async () => {
    await rig?.close();
    await f?.close();
  });

  it('reports progress events rising to the whole body, through XMLHttpRequest, and stores the file', async () => {
    const { record, events } = await page.evaluate((size) => (globalThis as unknown as { upload(n: number): Promise<{ record: { blob: { size: number } }; events: Array<{ loaded: number; total: number }> }> }).upload(size), SIZE);
    expect(record.blob.size).toBe(SIZE);
    expect(events.length).toBeGreaterThanOrEqual(1);
    const last = events.at(-1)!;
    expect(last.total).toBeGreaterThan(SIZE); // the multipart framing and the data part come on top
    expect(last.loaded).toBe(last.total);
    for (let i = 1; i < events.length; i++) expect(events[i]!.loaded).toBeGreaterThanOrEqual(events[i - 1]!.loaded);
    expect(await page.evaluate(() => (globalThis as unknown as { xhrs: number }).xhrs)).toBe(1);
  });
});
