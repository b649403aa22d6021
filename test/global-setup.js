// Builds the compiled packages once before any suite runs: the standalone-start and cluster
// suites run `dist/` entry points as real processes, exactly as `npm start` or a container does.
// The dashboard (dashboard/dist, served at /_/) is rebuilt only when a source is newer than it.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

function newestMtime(p) {
  const st = fs.statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  return Math.max(st.mtimeMs, ...fs.readdirSync(p).map((f) => newestMtime(path.join(p, f))));
}

module.exports = async () => {
  const root = path.resolve(__dirname, '..');
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-b', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
  const dash = path.join(root, 'dashboard');
  const built = path.join(dash, 'dist', 'index.html');
  const sources = ['src', 'index.html', 'vite.config.ts', 'package.json'].map((f) => newestMtime(path.join(dash, f)));
  if (!fs.existsSync(built) || fs.statSync(built).mtimeMs < Math.max(...sources)) {
    execFileSync(process.execPath, [path.join(root, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn'], { cwd: dash, stdio: 'inherit' });
  }
};
