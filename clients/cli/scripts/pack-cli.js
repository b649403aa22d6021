#!/usr/bin/env node
'use strict';
/**
 * `npm run pack:cli [-- <destination dir>]`: packs the `plinth` command-line client on its own,
 * as `plinth-cli-<version>.tgz`. The CLI (clients/cli/src) and the SDK it is built on
 * (@plinth/client, which has no runtime dependencies) are bundled into one file with esbuild, so
 * the tarball has no dependencies and runs anywhere with Node.js ≥ 20.19:
 * `npx ./plinth-cli-<version>.tgz help`. The server's code is not in it: `backup` and `restore`
 * answer that they run from a Plinth installation.
 */
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const cli = path.resolve(__dirname, '..');
const dest = path.resolve(process.argv[2] || process.cwd());
const { version } = JSON.parse(fs.readFileSync(path.join(cli, 'package.json'), 'utf8'));
const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-cli-pack-'));

async function main() {
  fs.mkdirSync(path.join(stage, 'bin'));
  fs.copyFileSync(path.join(cli, 'bin/plinth.js'), path.join(stage, 'bin/plinth.js'));
  fs.chmodSync(path.join(stage, 'bin/plinth.js'), 0o755);
  // From the sources: the SDK through the CLI's tsconfig paths, whatever state dist/ is in.
  await require('esbuild').build({
    entryPoints: [path.join(cli, 'src/run.ts')],
    outfile: path.join(stage, 'dist/run.js'),
    tsconfig: path.join(cli, 'tsconfig.build.json'),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'error',
  });
  const text = fs.readFileSync(path.join(stage, 'dist/run.js'), 'utf8');
  const bad = /require\("(@plinth\/[^"]+|\.{1,2}\/[^"]+)"\)/.exec(text);
  if (bad) throw new Error(`dist/run.js requires ${bad[1]}, which the packed CLI does not ship`);
  const pkg = {
    name: 'plinth-cli',
    version,
    description: 'The command-line client of a Plinth gateway: projects, keys, collections, records, users, schema as code, doctor.',
    bin: { plinth: 'bin/plinth.js' },
    files: ['bin', 'dist'],
    engines: { node: '>=20.19' },
    license: 'UNLICENSED',
  };
  fs.writeFileSync(path.join(stage, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  fs.writeFileSync(path.join(stage, 'README.md'), '# plinth-cli\n\n`plinth help` lists the commands; see docs/cli.md in the Plinth repository.\n');
  fs.mkdirSync(dest, { recursive: true });
  const out = execFileSync('npm', ['pack', '--silent', '--pack-destination', dest], { cwd: stage, encoding: 'utf8' });
  process.stdout.write(`${path.join(dest, out.trim().split('\n').pop())}\n`);
}

main()
  .catch((err) => {
    process.stderr.write(`pack-cli: ${err && err.message ? err.message : err}\n`);
    process.exitCode = 1;
  })
  .finally(() => fs.rmSync(stage, { recursive: true, force: true }));
