/**
 * Headless Chromium for the browser suites: Debian's `/usr/bin/chromium` (nothing is downloaded)
 * driven by playwright-core, with a fresh profile per launch that `close()` removes.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

export interface LaunchedChromium {
  browser: BrowserContext;
  close(): Promise<void>;
}

export async function launchChromium(viewport?: { width: number; height: number }): Promise<LaunchedChromium> {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-chromium-'));
  let browser: BrowserContext;
  try {
    browser = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      ...(viewport ? { viewport } : {}),
      args: [
        '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync',
      ],
    });
  } catch (err) {
    fs.rmSync(userDataDir, { recursive: true, force: true });
    throw err;
  }
  return {
    browser,
    close: async () => {
      await browser.close();
      fs.rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
