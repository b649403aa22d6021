/**
 * The SDK as a user installs it: the package is built and packed (`npm pack`), the tarball is
 * installed offline into a fresh directory outside the repository, and from there
 * - a Node script imports it as ESM and another requires it as CommonJS, each against a real
 *   standalone Plinth;
 * - a TypeScript app type-checks against its published declarations (compiler API, node16
 *   resolution for .mts and .cts, and bundler resolution), and a misspelt wire field does not;
 * - Vite builds a tiny browser app importing it, which Chromium runs against the same Plinth.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { chromium } from 'playwright-core';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { CHROMIUM } from './browser';
import { startProxy, type TestProxy } from './proxy';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { stagePackage } = require('../scripts/build.js') as { stagePackage(stage: string): Promise<void> };

const run = promisify(execFile);
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

const ESM_APP = `import { createRecordsClient, PlinthError } from '@plinth/client/records';
import { createAdminClient } from '@plinth/client/admin';
import { createClient } from '@plinth/client';
import { enableRealtime } from '@plinth/client/realtime';
const [url, project, secretKey] = process.argv.slice(2);
const admin = createAdminClient({ url, project, secretKey });
await admin.collections.create({ name: 'notes', fields: { body: { type: 'text' } }, rules: { read: 'true' } });
const db = createRecordsClient({ url, project, key: secretKey });
const note = await db.collection('notes').create({ body: 'from esm' });
const missing = await db.collection('notes').get('rec_00000000000000000000000000').catch((e) => e);
console.log(JSON.stringify({ id: note.id, body: note.body, notFound: missing instanceof PlinthError && missing.code, realtime: typeof enableRealtime, client: typeof createClient }));
`;

const CJS_APP = `const { createRecordsClient } = require('@plinth/client/records');
const { createClient, PlinthError } = require('@plinth/client');
const [url, project, key, id] = process.argv.slice(2);
(async () => {
  const note = await createRecordsClient({ url, project, key }).collection('notes').get(id);
  const refused = await createClient({ url, project, key }).auth.signIn('nobody@example.com', 'wrong').catch((e) => e);
  console.log(JSON.stringify({ body: note.body, refused: refused instanceof PlinthError && refused.code }));
})();
`;

/** Uses the wire types (User, Session, error codes) as an app would; `WRONG` misspells one field. */
const TYPED_APP = `import { createClient, PlinthError, type Session, type User } from '@plinth/client';
import type { RealtimeEvent } from '@plinth/client/realtime';
const plinth = createClient({ url: 'http://localhost:8080', project: 'demo', key: 'pk_x' });
export async function main(): Promise<string> {
  const session: Session = await plinth.auth.signIn('a@example.com', 'pw');
  const user: User = session.user;
  const code: string = new PlinthError({ status: 404, code: 'not_found', message: 'x' }).code;
  const onEvent = (e: RealtimeEvent<{ body: string }>): string => (e.kind === 'create' ? e.record.body : e.kind);
  return [user.email_verified, user.display_name, code, onEvent].join();
}
`;
const WRONG = TYPED_APP.replace('user.email_verified', 'user.emailVerified');

const PAGE = `<!doctype html><html><head><title>loading</title></head><body>
<script type="module" src="./main.js"></script></body></html>`;
const PAGE_MAIN = `import { createRecordsClient } from '@plinth/client/records';
const params = new URLSearchParams(location.search);
const db = createRecordsClient({ url: location.origin, project: params.get('project'), key: params.get('key') });
db.collection('notes').get(params.get('id')).then((r) => { document.title = 'body: ' + r.body; }, (e) => { document.title = 'error: ' + e.code; });
`;

describe('@plinth/client as a packed, installed package', () => {
  let t: TestPlinth;
  let tmp: string;
  let app: string;
  let packed: { filename: string; files: Array<{ path: string }> };

  beforeAll(async () => {
    t = await startTestPlinth();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-client-pack-'));
    const stage = path.join(tmp, 'stage');
    await stagePackage(stage);
    // --ignore-scripts: the staged copy is already built (prepack builds from a checkout)
    const pack = await run(NPM, ['pack', '--json', '--ignore-scripts', '--pack-destination', tmp], { cwd: stage });
    packed = (JSON.parse(pack.stdout) as Array<typeof packed>)[0]!;
    app = path.join(tmp, 'app');
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
    await run(NPM, ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', path.join(tmp, packed.filename)], { cwd: app });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('packs only the build, the README and package.json, and installs as a dependency of the app', () => {
    const files = packed.files.map((f) => f.path);
    expect(files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'dist/esm/index.js', 'dist/cjs/index.js', 'dist/types/index.d.ts']));
    expect(files.filter((f) => !f.startsWith('dist/') && f !== 'package.json' && f !== 'README.md')).toEqual([]);
    const installed = JSON.parse(fs.readFileSync(path.join(app, 'node_modules/@plinth/client/package.json'), 'utf8')) as { private?: boolean; dependencies?: object };
    expect(installed.private).toBeUndefined();
    expect(installed.dependencies).toBeUndefined();
    // the wire types come inlined (dist/types/protocol/), never as an import of the workspace package
    expect(files).toContain('dist/types/protocol/index.d.ts');
    const declarations = files.filter((f) => f.endsWith('.d.ts')).map((f) => fs.readFileSync(path.join(app, 'node_modules/@plinth/client', f), 'utf8'));
    expect(declarations.filter((text) => /from ['"]@plinth\/protocol['"]/.test(text))).toEqual([]);
    expect(Object.keys(JSON.parse(fs.readFileSync(path.join(app, 'package.json'), 'utf8')).dependencies)).toEqual(['@plinth/client']);
  });

  it('works imported as ESM and required as CommonJS from Node', async () => {
    const url = await t.url();
    fs.writeFileSync(path.join(app, 'esm.mjs'), ESM_APP);
    fs.writeFileSync(path.join(app, 'cjs.cjs'), CJS_APP);
    const esm = JSON.parse((await run(process.execPath, ['esm.mjs', url, t.project.id, t.project.secretKey], { cwd: app })).stdout);
    expect(esm).toEqual({ id: expect.stringMatching(/^rec_/), body: 'from esm', notFound: 'not_found', realtime: 'function', client: 'function' });
    const cjs = JSON.parse((await run(process.execPath, ['cjs.cjs', url, t.project.id, t.project.publicKey, esm.id], { cwd: app })).stdout);
    expect(cjs).toEqual({ body: 'from esm', refused: 'not_found' }); // Auth is off in this project
  });

  it("type-checks an app against the published declarations, and a misspelt wire field does not", () => {
    fs.writeFileSync(path.join(app, 'typed.mts'), TYPED_APP);
    fs.writeFileSync(path.join(app, 'typed.cts'), TYPED_APP);
    fs.writeFileSync(path.join(app, 'wrong.mts'), WRONG);
    const diagnose = (files: string[], module: ts.ModuleKind, moduleResolution: ts.ModuleResolutionKind) => {
      const options: ts.CompilerOptions = { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module, moduleResolution, lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'], types: [] };
      const program = ts.createProgram(files.map((f) => path.join(app, f)), options);
      return ts.getPreEmitDiagnostics(program).map((d) => `${d.file ? path.basename(d.file.fileName) : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    };
    // one program for node16 (both module kinds, and the misspelt app), one for bundler resolution
    const node16 = diagnose(['typed.mts', 'typed.cts', 'wrong.mts'], ts.ModuleKind.Node16, ts.ModuleResolutionKind.Node16);
    expect(node16).toEqual([expect.stringMatching(/^wrong\.mts: Property 'emailVerified' does not exist on type 'User'/)]);
    expect(diagnose(['typed.mts'], ts.ModuleKind.ESNext, ts.ModuleResolutionKind.Bundler)).toEqual([]);
  });

  it('builds into a browser app with Vite, which runs in Chromium', async () => {
    const web = path.join(app, 'web');
    fs.mkdirSync(web);
    fs.writeFileSync(path.join(web, 'index.html'), PAGE);
    fs.writeFileSync(path.join(web, 'main.js'), PAGE_MAIN);
    // Vite's build API in a process of its own, resolving @plinth/client from the app's node_modules
    const vite = require.resolve('vite');
    const script = `require(${JSON.stringify(vite)}).build({ root: ${JSON.stringify(web)}, logLevel: 'silent', configFile: false, build: { outDir: 'dist' } }).catch((e) => { console.error(e); process.exit(1); });`;
    await run(process.execPath, ['-e', script], { cwd: app });
    const dist = path.join(web, 'dist');
    const assets = fs.readdirSync(path.join(dist, 'assets')).filter((f) => f.endsWith('.js'));
    expect(assets).toHaveLength(1);
    const bundle = fs.readFileSync(path.join(dist, 'assets', assets[0]!), 'utf8');
    expect(bundle).toContain('X-Db-User-Token');
    expect(bundle).not.toContain('resume_from'); // realtime is not imported, so not shipped

    const url = await t.url();
    const note = JSON.parse((await run(process.execPath, ['-e', `
      const { createRecordsClient } = require('@plinth/client/records');
      createRecordsClient({ url: ${JSON.stringify(url)}, project: ${JSON.stringify(t.project.id)}, key: ${JSON.stringify(t.project.secretKey)} })
        .collection('notes').create({ body: 'from vite' }).then((r) => console.log(JSON.stringify(r)));`], { cwd: app })).stdout) as { id: string };
    const proxy: TestProxy = await startProxy(url, {
      staticFile: (p) => {
        const file = path.join(dist, p.split('?')[0] === '/' ? 'index.html' : p.split('?')[0]!);
        if (!file.startsWith(dist) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) return undefined;
        return { type: file.endsWith('.html') ? 'text/html' : 'text/javascript', body: fs.readFileSync(file) };
      },
    });
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
    try {
      const page = await browser.newPage();
      const query = new URLSearchParams({ project: t.project.id, key: t.project.publicKey, id: note.id });
      await page.goto(`${proxy.url}/?${query}`);
      await page.waitForFunction('document.title !== "loading"');
      expect(await page.title()).toBe('body: from vite');
    } finally {
      await browser.close();
      await proxy.close();
    }
  });
});
