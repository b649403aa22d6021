// The SDK's declarations import the wire types from the workspace package @plinth/protocol
// (types only, never published). A published package must not name it, so the build copies
// protocol's declaration files into dist/types/protocol/ and points every import at that copy:
// an app installing @plinth/client needs nothing else for its types to resolve.
const fs = require('node:fs');
const path = require('node:path');

const SPECIFIER = /(from\s+|import\()(['"])@plinth\/protocol\2/g;

function protocolDir() {
  return path.dirname(require.resolve('@plinth/protocol/package.json', { paths: [path.resolve(__dirname, '..')] }));
}

function declarationFiles(dir) {
  return fs.readdirSync(dir, { recursive: true }).filter((f) => f.endsWith('.d.ts')).map((f) => path.join(dir, f));
}

/** Copies the protocol's .d.ts files into `typesDir`/protocol and rewrites the imports of them. */
function inlineProtocolTypes(typesDir) {
  const files = declarationFiles(typesDir);
  const uses = files.filter((f) => fs.readFileSync(f, 'utf8').includes('@plinth/protocol'));
  if (uses.length === 0) return;
  const src = path.join(protocolDir(), 'src');
  const dest = path.join(typesDir, 'protocol');
  for (const file of declarationFiles(src)) {
    const target = path.join(dest, path.relative(src, file));
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.copyFileSync(file, target);
  }
  for (const file of uses) {
    let rel = path.relative(path.dirname(file), path.join(dest, 'index')).split(path.sep).join('/');
    if (!rel.startsWith('.')) rel = `./${rel}`;
    const text = fs.readFileSync(file, 'utf8').replace(SPECIFIER, (_m, head, q) => `${head}${q}${rel}${q}`);
    fs.writeFileSync(file, text);
  }
}

module.exports = { inlineProtocolTypes };
