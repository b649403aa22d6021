/**
 * Files in a real browser through the real gateway, in both topologies (docs/files.md): a file
 * token in `<img src>` shows the image and stops working once it expires; an uploaded HTML page
 * and an SVG with script, navigated to or framed by a page of our origin, run no script there.
 */
import request from 'supertest';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { png } from '../../services/records/test/files/file-fixtures';
import { launchChromium, type LaunchedChromium } from './support/chromium';

let t: TestPlinth;
let base: string;
let chromium: LaunchedChromium;
let alice: { uid: string; token: string };
const at = (p: string): string => `/v1/projects/${t.project.id}${p}`;
/** Every request the browser made whose URL says a script ran. */
const pwned: string[] = [];

const ATTACK = '<html><body><script>localStorage.setItem("x", "1"); fetch("/pwned?html=" + encodeURIComponent(String(localStorage.getItem("secret"))))</script></body></html>';
const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>fetch("/pwned?svg")</script><rect width="10" height="10"/></svg>';

beforeAll(async () => {
  t = await startTestPlinth();
  base = await t.url();
  const secret = { Authorization: `Bearer ${t.project.secretKey}` };
  await request(t.app).patch(at('/settings/auth')).set(secret).send({ enabled: true }).expect(200);
  const signedUp = await request(t.app).post(at('/auth/signup')).set('Authorization', `Bearer ${t.project.publicKey}`).send({ email: 'img@files.example', password: 'img-Pa55word!' });
  expect(signedUp.status).toBe(201);
  alice = { uid: signedUp.body.user.id, token: signedUp.body.access_token };
  const made = await request(t.app)
    .post(at('/collections'))
    .set(secret)
    .send({
      name: 'gallery',
      fields: { owner: { type: 'text' }, picture: { type: 'file' } },
      rules: { read: 'auth != null && record.owner == auth.uid', create: 'auth != null && data.owner == auth.uid' },
    });
  expect(made.status).toBe(201);
  chromium = await launchChromium();
  chromium.browser.on('request', (r) => {
    if (r.url().includes('/pwned')) pwned.push(r.url());
  });
}, 60_000);
afterAll(async () => {
  await chromium?.close();
  await t?.close();
});

/** Alice's record holding `bytes`; the download URL of the file. */
async function uploaded(bytes: Buffer, filename: string): Promise<string> {
  const res = await request(t.app)
    .post(at('/collections/gallery/records'))
    .set('Authorization', `Bearer ${t.project.publicKey}`)
    .set('X-Db-User-Token', alice.token)
    .field('data', JSON.stringify({ owner: alice.uid }))
    .attach('picture', bytes, filename);
  expect(res.status).toBe(201);
  return `${base}${at(`/files/gallery/${res.body.record.id}/${res.body.record.picture.name}`)}`;
}

async function fileToken(ttlSeconds?: number): Promise<string> {
  const res = await request(t.app)
    .post(at('/files/token'))
    .set('Authorization', `Bearer ${t.project.publicKey}`)
    .set('X-Db-User-Token', alice.token)
    .send(ttlSeconds === undefined ? {} : { ttl_seconds: ttlSeconds });
  expect(res.status).toBe(200);
  return res.body.token as string;
}

/** The natural width of `<img src>` on a page of our origin, 0 when it did not load. */
async function imageWidth(src: string): Promise<number> {
  const page = await chromium.browser.newPage();
  try {
    await page.goto(`${base}/healthz`);
    return (await page.evaluate(`new Promise((resolve) => {
      const img = document.createElement('img');
      img.onload = () => resolve(img.naturalWidth);
      img.onerror = () => resolve(0);
      img.src = ${JSON.stringify(src)};
      document.body.appendChild(img);
    })`)) as number;
  } finally {
    await page.close();
  }
}

describe('files in Chromium', () => {
  it('shows an image by file token in <img src>, and no longer once the token expired', async () => {
    const url = await uploaded(await png(64, 48), 'pic.png');
    expect(await imageWidth(`${url}?token=${encodeURIComponent(await fileToken())}`)).toBe(64);
    expect(await imageWidth(url)).toBe(0);
    // A token of one second: once the gateway refuses it (401, polled), the browser shows nothing.
    const short = await fileToken(1);
    const path = `${url.slice(base.length)}?token=${encodeURIComponent(short)}`;
    let status = 0;
    for (let i = 0; i < 100 && (status = (await request(base).get(path)).status) !== 401; i++) await new Promise((r) => setTimeout(r, 50));
    expect(status).toBe(401);
    expect(await imageWidth(`${url}?token=${encodeURIComponent(short)}&n=2`)).toBe(0);
  });

  it('runs no script of an uploaded HTML page or SVG, navigated to or framed by a page of our origin', async () => {
    const token = encodeURIComponent(await fileToken());
    const html = `${await uploaded(Buffer.from(ATTACK), 'page.html')}?token=${token}`;
    const svg = `${await uploaded(Buffer.from(SVG), 'logo.svg')}?token=${token}`;
    pwned.length = 0;
    const page = await chromium.browser.newPage();
    try {
      // The control: a script of our origin's page does reach /pwned (so the check can see one).
      await page.goto(`${base}/healthz`);
      await page.evaluate(`localStorage.setItem('secret', 's3'); fetch('/pwned?control').catch(() => null)`);
      for (let i = 0; i < 100 && pwned.length === 0; i++) await page.waitForTimeout(20);
      expect(pwned.length).toBe(1);
      for (const url of [html, svg]) await page.goto(url, { waitUntil: 'load', timeout: 10_000 }).catch(() => undefined);
      await page.goto(`${base}/healthz`);
      await page.evaluate(`new Promise((resolve) => {
        let loaded = 0;
        for (const src of [${JSON.stringify(html)}, ${JSON.stringify(svg)}]) {
          const frame = document.createElement('iframe');
          frame.src = src;
          frame.onload = () => ++loaded === 2 && resolve();
          document.body.appendChild(frame);
        }
        const img = document.createElement('img');
        img.src = ${JSON.stringify(svg)};
        document.body.appendChild(img);
        setTimeout(resolve, 3000);
      })`);
      await page.waitForTimeout(300);
      expect(pwned).toEqual([`${base}/pwned?control`]);
      expect(await page.evaluate(`localStorage.getItem('x')`)).toBeNull();
    } finally {
      await page.close();
    }
  });
});
