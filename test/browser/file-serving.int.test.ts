/**
 * User content never runs as our origin (docs/files.md "Downloading"): an uploaded HTML page and
 * an SVG with script, served by sendFile, opened in headless Chromium every way a victim might
 * meet them — navigated to, framed by one of our pages, used as an image — run no script. A
 * control route serving the same HTML without the file headers shows the test would see it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FileMeta } from '../../services/records/src/files/file-field';
import { FILE_SECURITY_HEADERS, sendFile } from '../../services/records/src/files/serve-file';
import { DiskFileStorage } from '../../services/records/src/files/storage/disk-file-storage';
import { fileKey } from '../../services/records/src/files/storage/file-storage';
import { launchChromium, type LaunchedChromium } from './support/chromium';

const ATTACK = '<html><body><script>fetch("/pwned?c=" + encodeURIComponent(document.cookie + localStorage.getItem("secret")))</script></body></html>';
const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>fetch("/pwned?svg")</script><rect width="10" height="10"/></svg>';

let root: string;
let storage: DiskFileStorage;
let server: http.Server;
let base: string;
let chromium: LaunchedChromium;
const pwned: string[] = [];
const metas = new Map<string, FileMeta>();

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'plinth-xss-'));
  storage = await new DiskFileStorage(root).init();
  for (const [name, type, body] of [['page_aaaaaaaaaa.html', 'text/html', ATTACK], ['logo_bbbbbbbbbb.svg', 'image/svg+xml', SVG]] as const) {
    const o = await storage.put(fileKey('p1', 'c', name), [Buffer.from(body)], { maxBytes: 1 << 20 });
    metas.set(name, { name, original_name: name, type, size: o.size, sha256: o.sha256, created_at: '' });
  }
  server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    if (url.startsWith('/pwned')) {
      pwned.push(url);
      return void res.writeHead(204).end();
    }
    if (url === '/app') {
      // One of our pages, holding a secret in our origin's storage, that shows user files.
      return void res.writeHead(200, { 'content-type': 'text/html' }).end(
        '<script>localStorage.setItem("secret", "s3")</script><iframe src="/files/page_aaaaaaaaaa.html"></iframe><iframe src="/files/logo_bbbbbbbbbb.svg"></iframe><img src="/files/logo_bbbbbbbbbb.svg">',
      );
    }
    if (url === '/inline-with-csp') {
      // The file headers alone, even were the file rendered inline: the sandbox stops script.
      return void res.writeHead(200, { ...FILE_SECURITY_HEADERS, 'content-type': 'text/html' }).end(ATTACK);
    }
    if (url === '/control') return void res.writeHead(200, { 'content-type': 'text/html' }).end(ATTACK);
    const name = url.replace(/^\/files\//, '');
    const meta = metas.get(name);
    if (!meta) return void res.writeHead(404).end();
    void sendFile(req, res, storage, fileKey('p1', 'c', name), meta);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  chromium = await launchChromium();
}, 60_000);

afterAll(async () => {
  await chromium?.close();
  await new Promise((r) => server.close(r));
  await fs.rm(root, { recursive: true, force: true });
});

async function visit(url: string): Promise<void> {
  const page = await chromium.browser.newPage();
  try {
    // A download (attachment) aborts the navigation: that is the point.
    await page.goto(url, { waitUntil: 'load', timeout: 10_000 }).catch(() => undefined);
    await page.waitForTimeout(500);
  } finally {
    await page.close();
  }
}

describe('uploaded HTML and SVG in a browser', () => {
  it('the control: the same HTML served as a page of ours runs its script (the test can see it)', async () => {
    pwned.length = 0;
    await visit(`${base}/control`);
    expect(pwned.length).toBe(1);
  });

  it('navigating to an uploaded HTML page or SVG runs no script', async () => {
    pwned.length = 0;
    await visit(`${base}/files/page_aaaaaaaaaa.html`);
    await visit(`${base}/files/logo_bbbbbbbbbb.svg`);
    expect(pwned).toEqual([]);
  });

  it('one of our pages framing them or showing the SVG as an image runs no script of theirs', async () => {
    pwned.length = 0;
    await visit(`${base}/app`);
    expect(pwned).toEqual([]);
  });

  it('the sandbox CSP alone stops the script, were the file ever rendered inline', async () => {
    pwned.length = 0;
    await visit(`${base}/inline-with-csp`);
    expect(pwned).toEqual([]);
  });
});
