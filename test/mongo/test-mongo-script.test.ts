/**
 * `npm run test:mongo` and the documented MONGO_URL commands: the script refuses clearly where
 * Docker cannot run MongoDB, and every documented command runs exactly the suites with
 * real-server tests (jest's `--selectProjects` would swallow paths written after it).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const SCRIPT = path.join(ROOT, 'scripts/test-mongo.js');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { MONGO_SUITES } = require(SCRIPT) as { MONGO_SUITES: string[] };

let bin: string;
beforeEach(() => {
  bin = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-test-mongo-bin-'));
  fs.symlinkSync(process.execPath, path.join(bin, 'node'));
});
afterEach(() => fs.rmSync(bin, { recursive: true, force: true }));

function runScript(): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [SCRIPT], { env: { PATH: bin, HOME: os.tmpdir() }, encoding: 'utf8', timeout: 20_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('npm run test:mongo', () => {
  it('is the script', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { [name: string]: string } };
    expect(pkg.scripts['test:mongo']).toBe('node scripts/test-mongo.js');
  });

  it('without docker on PATH: one line saying Docker is needed, exit 1', () => {
    const { status, out } = runScript();
    expect(status).toBe(1);
    expect(out.trim().split('\n')).toEqual([expect.stringContaining('npm run test:mongo needs Docker, and `docker` is not on PATH')]);
  });

  it('with a Docker daemon that does not answer: one line saying so, exit 1, nothing started', () => {
    const calls = path.join(bin, 'calls');
    fs.writeFileSync(
      path.join(bin, 'docker'),
      `#!/bin/sh\necho "$@" >> '${calls}'\necho 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?' >&2\nexit 1\n`,
      { mode: 0o755 },
    );
    const { status, out } = runScript();
    expect(status).toBe(1);
    expect(out.trim().split('\n')).toEqual([expect.stringContaining('its daemon does not answer (Cannot connect to the Docker daemon')]);
    expect(fs.readFileSync(calls, 'utf8').trim().split('\n')).toEqual(['version --format {{.Server.Version}}']);
  });
});

/** The `MONGO_URL=… npx jest …` command of a doc, as arguments to jest. */
function documentedJestArgs(doc: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, doc), 'utf8').replace(/\\\n\s*/g, ' ');
  const line = text.split('\n').find((l) => /^MONGO_URL='[^']*' npx jest /.test(l));
  if (!line) throw new Error(`${doc} shows no MONGO_URL='…' npx jest command`);
  return line.replace(/^MONGO_URL='[^']*' npx jest /, '').trim().split(/\s+/);
}

function listedSuites(args: string[]): string[] {
  const r = spawnSync(process.execPath, [require.resolve('jest/bin/jest'), ...args, '--listTests'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  expect(r.status).toBe(0);
  return r.stdout.split('\n').filter((l) => l.endsWith('.ts')).map((f) => path.relative(ROOT, f)).sort();
}

describe.each(['docs/testing.md', 'docs/deploy.md'])('the MONGO_URL command of %s', (doc) => {
  it('runs exactly the suites with real-server tests, the ones npm run test:mongo runs', () => {
    expect(listedSuites(documentedJestArgs(doc))).toEqual([...MONGO_SUITES].sort());
  }, 60_000);
});
