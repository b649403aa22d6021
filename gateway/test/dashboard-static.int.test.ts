/**
 * The gateway serves the built dashboard (dashboard/dist) at /_/: index.html never cached,
 * hashed assets cached for a year, a strict Content-Security-Policy; and the first page stays
 * within 150 kB min+gzip.
 */
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import request from 'supertest';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';

const DIST = path.resolve(__dirname, '../../dashboard/dist');
let t: TestPlinth;

beforeAll(async () => {
  t = await startTestPlinth();
});
afterAll(() => t.close());

/** The script and stylesheet files index.html loads (the first page). */
function firstPageAssets(): string[] {
  const html = fs.readFileSync(path.join(DIST, 'index.html'), 'utf8');
  return [...html.matchAll(/(?:src|href)="\/_\/(assets\/[^"]+)"/g)].map((m) => m[1] as string);
}

it('/_ redirects to /_/, which answers index.html, not cached, under a strict CSP', async () => {
  const redirect = await request(t.app).get('/_');
  expect(redirect.status).toBe(301);
  expect(redirect.headers.location).toBe('/_/');
  const res = await request(t.app).get('/_/');
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/text\/html/);
  expect(res.headers['cache-control']).toBe('no-cache');
  const csp = res.headers['content-security-policy'] as string;
  expect(csp).toContain("default-src 'self'");
  expect(csp).toContain("script-src 'self'");
  expect(csp).not.toContain('unsafe-inline');
  expect(csp).not.toContain('unsafe-eval');
  expect(res.text).toContain('<div id="app">');
  expect(res.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
});

it('hashed assets are cached for a year as immutable; an unknown asset is a 404 envelope', async () => {
  const assets = firstPageAssets();
  expect(assets.some((a) => a.endsWith('.js'))).toBe(true);
  for (const a of assets) {
    const res = await request(t.app).get(`/_/${a}`);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  }
  const missing = await request(t.app).get('/_/assets/nope-123.js');
  expect(missing.status).toBe(404);
  expect(missing.body.error).toBe('not_found');
});

it('the first page (index.html, its script and stylesheet) is at most 150 kB min+gzip', () => {
  const files = ['index.html', ...firstPageAssets()];
  const total = files.reduce((sum, f) => sum + gzipSync(fs.readFileSync(path.join(DIST, f)), { level: 9 }).length, 0);
  expect(total).toBeLessThanOrEqual(150 * 1024);
});
