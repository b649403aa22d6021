// A consumer process for the outbox crash test: claims one job, reports it, then hangs until the
// parent kills it with SIGKILL (no stop(), no close(): the lease is left behind as after a crash).
// Loads the TypeScript adapter through @swc/core, as jest does.
const fs = require('node:fs');
const swc = require('@swc/core');

require.extensions['.ts'] = (module, filename) => {
  const { code } = swc.transformSync(fs.readFileSync(filename, 'utf8'), {
    filename,
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
  });
  module._compile(code, filename);
};

const { EmbeddedMailQueue } = require('../../src/mail-queue/embedded-mail-queue.ts');

const [file, leaseMs] = process.argv.slice(2);
const queue = new EmbeddedMailQueue({ file, attempts: 3, backoffMs: 5, pollMs: 10, leaseMs: Number(leaseMs) });
queue.start(async (job) => {
  process.send({ claimed: job.id });
  await new Promise(() => {});
});
