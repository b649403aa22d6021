#!/usr/bin/env node
/**
 * `npm test`'s jest runs (after the type-check): every suite but the timing-sensitive ones
 * (SERIAL_SUITES in jest.config.js) in two worker processes, then those alone, one at a time.
 * Both runs always happen; the exit code is the first failure's. Arguments are passed to both
 * (e.g. `npm test -- --ci`).
 */
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const jest = path.join(__dirname, '..', 'node_modules', 'jest', 'bin', 'jest.js');
const args = process.argv.slice(2);
const runs = [
  { phase: 'parallel', flags: ['--maxWorkers=2', '--passWithNoTests'] },
  { phase: 'serial', flags: ['--runInBand', '--passWithNoTests'] },
];
let code = 0;
for (const { phase, flags } of runs) {
  const started = Date.now();
  const r = spawnSync(process.execPath, ['--max-old-space-size=8192', jest, ...flags, ...args], {
    stdio: 'inherit',
    env: { ...process.env, PLINTH_TEST_PHASE: phase },
  });
  const status = r.status ?? 1;
  console.log(`test: the ${phase} run ended with ${status} after ${Math.round((Date.now() - started) / 1000)} s`);
  if (status !== 0 && code === 0) code = status;
}
process.exit(code);
