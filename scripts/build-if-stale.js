#!/usr/bin/env node
'use strict';
// `npm start` runs this before the server: it builds (`npm run build`) only when a source file is
// newer than the last build, so a start after an unchanged checkout takes no build at all.
//   node scripts/build-if-stale.js          build when stale, then record the build
//   node scripts/build-if-stale.js --mark   record that a build just finished (the end of `npm run build`)
// The record is the modification time of dist/.build-stamp. PLINTH_BUILD_ROOT and
// PLINTH_BUILD_COMMAND exist for this script's own test.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = process.env.PLINTH_BUILD_ROOT || path.resolve(__dirname, '..');
const stamp = path.join(root, 'dist', '.build-stamp');
/** What a build reads: every workspace's sources and the files that configure the build. */
const SOURCES = ['shared', 'services', 'gateway', 'clients', 'dashboard', 'package.json', 'package-lock.json', 'tsconfig.base.json', 'tsconfig.build.json'];
const SKIP = new Set(['node_modules', 'dist', 'test', 'coverage']);

function newestSource(p) {
  let stat;
  try {
    stat = fs.statSync(p);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = 0;
  for (const entry of fs.readdirSync(p, { withFileTypes: true })) {
    if (SKIP.has(entry.name) || entry.name.endsWith('.tsbuildinfo')) continue;
    newest = Math.max(newest, newestSource(path.join(p, entry.name)));
  }
  return newest;
}

function mark() {
  fs.mkdirSync(path.dirname(stamp), { recursive: true });
  fs.writeFileSync(stamp, `${new Date().toISOString()}\n`);
}

if (process.argv.includes('--mark')) {
  mark();
  process.exit(0);
}

let built = 0;
try {
  built = fs.statSync(stamp).mtimeMs;
} catch {
  built = 0;
}
const newest = Math.max(...SOURCES.map((s) => newestSource(path.join(root, s))));
if (built > 0 && newest <= built) process.exit(0);

process.stdout.write(built > 0 ? 'plinth: sources changed since the last build; building…\n' : 'plinth: building…\n');
const command = process.env.PLINTH_BUILD_COMMAND || 'npm run build';
const result = spawnSync(command, { cwd: root, stdio: 'inherit', shell: true });
if (result.status !== 0) process.exit(result.status ?? 1);
mark();
