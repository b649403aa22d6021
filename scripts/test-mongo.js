#!/usr/bin/env node
/**
 * `npm run test:mongo`: runs every suite that has tests against a real MongoDB (they register
 * them only when MONGO_URL is set) against a throw-away `mongo:7` one-member replica set in
 * Docker, then removes the container. Extra arguments go to jest (`npm run test:mongo -- -t x`).
 *
 * Where Docker is missing or its daemon does not answer, it says so in one line and exits 1:
 * `npm test` never needs Docker (the suites use the mingo stand-in there).
 */
'use strict';
const { spawn, spawnSync } = require('node:child_process');
const net = require('node:net');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const IMAGE = 'mongo:7';
/** The suites with tests that run against a real server when MONGO_URL is set. */
const MONGO_SUITES = [
  'gateway/test/mongo-project-store.test.ts',
  'services/records/test/mongo-record-store.test.ts',
  'services/records/test/webhooks/webhook-stores.test.ts',
  'services/auth/test/mongo-user-store.test.ts',
];

function refuse(line) {
  process.stderr.write(`${line}\n`);
  process.exit(1);
}

function docker(args, opts = {}) {
  return spawnSync('docker', args, { encoding: 'utf8', timeout: 120_000, ...opts });
}

function requireDocker() {
  const v = docker(['version', '--format', '{{.Server.Version}}']);
  if (v.error && v.error.code === 'ENOENT') {
    refuse('npm run test:mongo needs Docker, and `docker` is not on PATH: install Docker, or set MONGO_URL to a replica set you may write to and run the suites as docs/testing.md shows.');
  }
  if (v.error || v.status !== 0) {
    refuse(`npm run test:mongo needs Docker, and its daemon does not answer (${(v.stderr || String(v.error)).trim().split('\n')[0]}): start Docker and run it again.`);
  }
}

async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Runs mongosh in the container until `check` accepts its output, or gives up after `ms`. */
async function waitFor(name, script, check, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    const r = docker(['exec', name, 'mongosh', '--quiet', '--eval', script]);
    if (r.status === 0 && check(r.stdout.trim())) return;
    if (Date.now() > deadline) throw new Error(`MongoDB in container ${name} did not get ready: ${(r.stderr || r.stdout).trim()}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function main() {
  requireDocker();
  const port = await freePort();
  const name = `plinth-test-mongo-${process.pid}`;
  const started = docker(['run', '-d', '--rm', '--name', name, '-p', `127.0.0.1:${port}:27017`, IMAGE, '--replSet', 'rs0', '--bind_ip_all']);
  if (started.status !== 0) refuse(`Could not start ${IMAGE} in Docker: ${(started.stderr || '').trim().split('\n')[0]}`);
  const stop = () => docker(['rm', '-f', name], { stdio: 'ignore' });
  process.on('SIGINT', () => {
    stop();
    process.exit(130);
  });
  try {
    await waitFor(name, 'db.adminCommand({ ping: 1 }).ok', (out) => out === '1', 60_000);
    docker(['exec', name, 'mongosh', '--quiet', '--eval', "rs.initiate({ _id: 'rs0', members: [{ _id: 0, host: '127.0.0.1:27017' }] })"]);
    await waitFor(name, 'db.hello().isWritablePrimary', (out) => out === 'true', 60_000);
    // The container's member calls itself 127.0.0.1:27017; connect to it directly through the published port.
    const env = { ...process.env, MONGO_URL: `mongodb://127.0.0.1:${port}/?directConnection=true` };
    process.stdout.write(`MongoDB ${IMAGE} replica set rs0 in container ${name} on 127.0.0.1:${port}\n`);
    // Paths first: `--selectProjects` takes every argument after it as a project name.
    const jest = spawn(process.execPath, [require.resolve('jest/bin/jest'), ...MONGO_SUITES, '--selectProjects', 'standalone', ...process.argv.slice(2)], {
      cwd: ROOT,
      env,
      stdio: 'inherit',
    });
    const code = await new Promise((resolve) => jest.once('exit', (c) => resolve(c ?? 1)));
    process.exitCode = code;
  } finally {
    stop();
  }
}

module.exports = { MONGO_SUITES };

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
