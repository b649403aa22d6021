import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';

const ROOT = path.resolve(__dirname, '../../..');

/** The README's SDK example, as written, runs against a fresh standalone Plinth with a `demo` project. */
describe("README's SDK example", () => {
  let t: TestPlinth;
  let tmp: string;
  beforeAll(async () => {
    t = await startTestPlinth();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-readme-sdk-'));
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('runs and creates the record it shows', async () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const block = /### The same with the SDK[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toContain("from '@plinth/client'");
    const demo = await t.createProject('demo');
    const out = path.join(tmp, 'readme.mjs');
    await build({
      stdin: { contents: block!, loader: 'ts', resolveDir: tmp },
      bundle: true,
      format: 'esm',
      platform: 'node',
      outfile: out,
      logLevel: 'silent',
      plugins: [
        {
          name: 'plinth-client-source',
          setup(b) {
            b.onResolve({ filter: /^@plinth\/client(\/admin)?$/ }, (a) => ({
              path: path.join(ROOT, 'clients/js/src', a.path.endsWith('/admin') ? 'admin.ts' : 'index.ts'),
            }));
          },
        },
      ],
    });
    const env = { ...process.env, PLINTH: await t.url(), PK: demo.publicKey, SK: demo.secretKey };
    const { stdout } = await promisify(execFile)(process.execPath, [out], { env, timeout: 20_000 });
    expect(stdout.trim()).toMatch(/^rec_\w+ 1$/);
    const res = await fetch(`${env.PLINTH}/v1/projects/demo/collections/sdk_notes/records`, { headers: { authorization: `Bearer ${demo.secretKey}` } });
    expect(((await res.json()) as { records: Array<{ id: string }> }).records.map((r) => r.id)).toEqual([stdout.trim().split(' ')[0]]);
  });
});
