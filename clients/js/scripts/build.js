// Builds @plinth/client: ESM (esbuild, one file per entry point plus shared chunks, so a bundler
// can drop what an app does not import), CommonJS and type declarations (tsc).
// `node scripts/build.js` writes dist/; `node scripts/build.js --stage DIR` writes a publishable
// copy of the package (package.json, README.md, dist/) into DIR, which `npm pack DIR` packs.
// The size and package tests call these functions themselves, into temporary directories.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const ENTRY_POINTS = ['index', 'records', 'admin', 'operator', 'realtime']
  .map((name) => path.join(root, 'src', `${name}.ts`))
  .filter((file) => fs.existsSync(file));

/** ESM build of every entry point into `outdir` (default dist/esm); returns the paths written. */
async function buildEsm(outdir = path.join(root, 'dist/esm')) {
  const esbuild = require('esbuild');
  const result = await esbuild.build({
    entryPoints: ENTRY_POINTS,
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    write: true,
    metafile: true,
    logLevel: 'silent',
  });
  fs.writeFileSync(path.join(outdir, 'package.json'), '{"type":"module"}\n');
  return Object.keys(result.metafile.outputs).map((p) => path.resolve(process.cwd(), p));
}

/** CommonJS build (`dist`/cjs) and declarations (`dist`/types) with tsc. */
function buildCjs(dist = path.join(root, 'dist')) {
  const tsc = require.resolve('typescript/bin/tsc');
  // Not incremental here: a published dist/ carries no .tsbuildinfo (`tsc -b` at the root builds it composite).
  const out = ['--composite', 'false', '--outDir', path.join(dist, 'cjs'), '--declarationDir', path.join(dist, 'types')];
  execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json'), ...out], { stdio: 'inherit' });
  fs.writeFileSync(path.join(dist, 'cjs/package.json'), '{"type":"commonjs"}\n');
  require('./inline-protocol-types.js').inlineProtocolTypes(path.join(dist, 'types'));
}

/** The whole of dist/ (CommonJS, declarations, ESM) into `dist`, emptied first. */
async function buildDist(dist = path.join(root, 'dist')) {
  fs.rmSync(dist, { recursive: true, force: true });
  buildCjs(dist);
  await buildEsm(path.join(dist, 'esm'));
}

/** A publishable copy of the package in `stage`: package.json, README.md and a fresh dist/. */
async function stagePackage(stage) {
  fs.mkdirSync(stage, { recursive: true });
  for (const file of ['package.json', 'README.md']) fs.copyFileSync(path.join(root, file), path.join(stage, file));
  await buildDist(path.join(stage, 'dist'));
}

module.exports = { buildEsm, buildCjs, buildDist, stagePackage, root };

if (require.main === module) {
  const at = process.argv.indexOf('--stage');
  const done = at > 0 ? stagePackage(path.resolve(process.argv[at + 1])) : buildDist();
  done.catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
