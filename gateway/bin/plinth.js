#!/usr/bin/env node
'use strict';
// `npx plinth …` — the operator CLI. Runs the compiled gateway package (built by `npm install`/`npm run build`).
let cli;
try {
  cli = require('../dist/cli/run.js');
} catch (err) {
  if (err && err.code === 'MODULE_NOT_FOUND') {
    process.stderr.write('plinth: not built yet — run `npm run build` at the repository root first.\n');
    process.exit(1);
  }
  throw err;
}
cli.runCli(process.argv.slice(2), { env: process.env, out: process.stdout, err: process.stderr }).then((code) => {
  process.exitCode = code;
});
