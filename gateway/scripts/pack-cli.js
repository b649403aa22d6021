#!/usr/bin/env node
'use strict';
/**
 * `npm run pack:cli [-- <destination dir>]`: packs the `plinth` command-line client on its own,
 * as `plinth-cli-<version>.tgz`. The CLI (gateway/src/cli, built to gateway/dist/cli) imports
 * nothing outside its folder and only node's own modules, so the tarball has no dependencies
 * and runs anywhere with Node.js ≥ 20.19: `npx ./plinth-cli-<version>.tgz help`.
 */
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const gateway = path.resolve(__dirname, '..');
const dest = path.resolve(process.argv[2] || process.cwd());
const built = path.join(gateway, 'dist/cli');
if (!fs.existsSync(path.join(built, 'run.js'))) {
  process.stderr.write('pack-cli: gateway/dist/cli is missing; run `npm run build` first\n');
  process.exit(1);
}
const { version } = JSON.parse(fs.readFileSync(path.join(gateway, 'package.json'), 'utf8'));
const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-cli-pack-'));
try {
  fs.mkdirSync(path.join(stage, 'bin'));
  fs.copyFileSync(path.join(gateway, 'bin/plinth.js'), path.join(stage, 'bin/plinth.js'));
  fs.chmodSync(path.join(stage, 'bin/plinth.js'), 0o755);
  fs.cpSync(built, path.join(stage, 'dist/cli'), { recursive: true, filter: (src) => !src.endsWith('.d.ts') && !src.endsWith('.map') });
  for (const file of walk(path.join(stage, 'dist'))) {
    const text = fs.readFileSync(file, 'utf8');
    const bad = /require\("(@plinth\/[^"]+|\.\.\/\.\.\/[^"]+)"\)/.exec(text);
    if (bad) throw new Error(`${path.relative(stage, file)} requires ${bad[1]}, which the packed CLI does not ship`);
  }
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
} finally {
  fs.rmSync(stage, { recursive: true, force: true });
}

function walk(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}
