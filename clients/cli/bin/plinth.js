#!/usr/bin/env node
'use strict';
// `plinth …` — the Plinth command-line client. Runs the compiled CLI (clients/cli/dist, with the
// SDK's clients/js/dist), built by `npm install` / `npm run build` in the repository, or the
// single bundled file shipped in the packed CLI tarball.
let cli;
try {
  cli = require('../dist/run.js');
} catch (err) {
  if (err && err.code === 'MODULE_NOT_FOUND') {
    process.stderr.write('plinth: not built yet — run `npm run build` at the repository root first.\n');
    process.exit(1);
  }
  throw err;
}
cli.runCli(process.argv.slice(2), { env: process.env, out: process.stdout, err: process.stderr, stdin: process.stdin }).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`plinth: ${err && err.message ? err.message : err}\n`);
    process.exitCode = 1;
  },
);
