/**
 * Headless Chromium for the SDK's browser tests: Debian's `/usr/bin/chromium` (nothing is
 * downloaded) driven by playwright-core, a fresh profile per run, and a same-origin server that
 * serves a test page and the SDK's ESM build and forwards `/v1/…` to a real Plinth.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { startProxy, type TestProxy } from './proxy';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { buildEsm } = require('../scripts/build.js') as { buildEsm(outdir: string): Promise<string[]> };

export const CHROMIUM = process.env.PLINTH_CHROMIUM ?? '/usr/bin/chromium';

export interface BrowserRig {
  proxy: TestProxy;
  context: BrowserContext;
  close(): Promise<void>;
}

/** Builds the SDK, serves `page` at `/` and the build at `/sdk/`, and opens a browser profile. */
export async function startBrowserRig(upstream: string, page: string): Promise<BrowserRig> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-browser-'));
  const sdkDir = path.join(tmp, 'sdk');
  await buildEsm(sdkDir);
  const proxy = await startProxy(upstream, {
    staticFile: (p) => {
      if (p === '/' || p.startsWith('/?')) return { type: 'text/html; charset=utf-8', body: page };
      const m = /^\/sdk\/([\w.-]+\.js)$/.exec(p);
      if (m && fs.existsSync(path.join(sdkDir, m[1]!))) return { type: 'text/javascript', body: fs.readFileSync(path.join(sdkDir, m[1]!)) };
      return undefined;
    },
  });
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(path.join(tmp, 'profile'), {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  } catch (err) {
    await proxy.close();
    fs.rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
  return {
    proxy,
    context,
    close: async () => {
      await context.close();
      await proxy.close();
      fs.rmSync(tmp, { recursive: true, force: true });
    },
  };
}
