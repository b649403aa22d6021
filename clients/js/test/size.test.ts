import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

// The package's own build script (CommonJS), as `npm run build` runs it.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { buildEsm } = require('../scripts/build.js') as { buildEsm(outdir: string): Promise<string[]> };

/** What an app pays for an entry point: its ESM build bundled and minified, then gzipped. */
async function minGzip(entry: string): Promise<{ bytes: number; code: string }> {
  const out = await build({ entryPoints: [entry], bundle: true, minify: true, format: 'esm', write: false, logLevel: 'silent' });
  const code = out.outputFiles[0]!.text;
  return { bytes: gzipSync(code, { level: 9 }).length, code };
}

describe('@plinth/client build output', () => {
  let dir: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-client-build-'));
    await buildEsm(dir);
  });
  afterAll(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the records + auth entry point (everything it exports) is at most 10 kB min+gzip', async () => {
    const { bytes, code } = await minGzip(path.join(dir, 'index.js'));
    expect(code).toContain('/auth/refresh');
    expect(bytes).toBeLessThanOrEqual(10 * 1024);
  });

  it('the realtime entry point carries the WebSocket client', async () => {
    const { code } = await minGzip(path.join(dir, 'realtime.js'));
    expect(code).toContain('resume_from');
  });

  it('importing records only pulls in neither Auth nor realtime', async () => {
    const { code } = await minGzip(path.join(dir, 'records.js'));
    expect(code).toContain('Idempotency-Key');
    expect(code).not.toContain('/auth/');
    expect(code).not.toContain('BroadcastChannel');
    expect(code).not.toContain('WebSocket');
  });

  it('the main entry point does not pull in realtime or the secret-key helpers', async () => {
    const { code } = await minGzip(path.join(dir, 'index.js'));
    expect(code).not.toContain('WebSocket');
    expect(code).not.toContain('resume_from');
    expect(code).not.toContain('/auth/tokens');
    expect(code).not.toContain('/settings/auth');
  });
});
