/**
 * `npm start` builds only when a source changed since the last build (scripts/build-if-stale.js),
 * run here on a throw-away tree with a build command that counts its runs.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const SCRIPT = path.resolve(__dirname, '../../scripts/build-if-stale.js');

describe('build-if-stale', () => {
  let root: string;
  const builds = () => (fs.existsSync(path.join(root, 'builds.log')) ? fs.readFileSync(path.join(root, 'builds.log'), 'utf8').length : 0);
  const run = (...args: string[]) =>
    execFileSync(process.execPath, [SCRIPT, ...args], {
      env: { ...process.env, PLINTH_BUILD_ROOT: root, PLINTH_BUILD_COMMAND: `node -e "require('fs').appendFileSync('builds.log', 'x')"` },
      encoding: 'utf8',
    });
  const touch = (file: string, secondsFromNow: number) => {
    const at = new Date(Date.now() + secondsFromNow * 1000);
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), 'x');
    fs.utimesSync(path.join(root, file), at, at);
  };

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-build-stamp-'));
    touch('shared/src/a.ts', -60);
    touch('services/records/src/b.ts', -60);
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('builds the first time, then not again while nothing changed', () => {
    expect(run()).toContain('building');
    expect(builds()).toBe(1);
    expect(run()).toBe('');
    expect(run()).toBe('');
    expect(builds()).toBe(1);
  });

  it('builds again after a source changed, not after a test, a dist or a node_modules file did', () => {
    run();
    touch('services/records/test/x.test.ts', 60);
    touch('gateway/dist/y.js', 60);
    touch('shared/node_modules/z/index.js', 60);
    run();
    expect(builds()).toBe(1);
    touch('services/records/src/b.ts', 60);
    expect(run()).toContain('sources changed');
    expect(builds()).toBe(2);
  });

  it('counts a build made by `npm run build` (--mark) as up to date', () => {
    run('--mark');
    expect(run()).toBe('');
    expect(builds()).toBe(0);
  });
});
