// Builds @plinth/client: ESM (esbuild, one file per entry point plus shared chunks, so a bundler
// can drop what an app does not import), CommonJS and type declarations (tsc).
// `node scripts/build.js` writes dist/; the size and browser tests call buildEsm() themselves.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const ENTRY_POINTS = ['index', 'records', 'admin', 'realtime']
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

/** CommonJS build (dist/cjs) and declarations (dist/types) with tsc. */
function buildCjs() {
  const tsc = require.resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  fs.writeFileSync(path.join(root, 'dist/cjs/package.json'), '{"type":"commonjs"}\n');
}

module.exports = { buildEsm, buildCjs, root };

if (require.main === module) {
  fs.rmSync(path.join(root, 'dist'), { recursive: true, force: true });
  buildCjs();
  buildEsm().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
