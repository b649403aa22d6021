// Builds the compiled packages once before any suite runs: the standalone-start and cluster
// suites run `dist/` entry points as real processes, exactly as `npm start` or a container does.
const { execFileSync } = require('node:child_process');
const path = require('node:path');

module.exports = async () => {
  const root = path.resolve(__dirname, '..');
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-b', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
};
