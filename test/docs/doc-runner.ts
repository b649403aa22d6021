/**
 * Runs a doc's ```sh blocks, in order, in ONE bash process (so a variable set in one block is
 * there in the next), against a running Plinth. The runner:
 * - exports PLINTH (base URL), PK, SK (the demo project's public and secret keys), ADMIN (the
 *   operator key), PLINTH_DATA_DIR (the server's data directory, when known); runs in a fresh temporary directory where `examples/` is the repository's;
 * - sets NODE_PATH to the repository's node_modules, so a `node -e` one-liner can `require` a
 *   package the doc tells its reader to install (e.g. `otpauth` for two-factor codes);
 * - stops at the first failing command (`set -Eeuo pipefail`), naming the doc line;
 * - wraps `curl` in a shell function that remembers the last response's status (via `-D`) and
 *   body (via `tee`), so a following `# → 201 {"record":{…}}` comment asserts that status and
 *   that the body has the keys shown (checked after the run, see shown-json.ts);
 * - makes `npx plinth …` run this repository's CLI (clients/cli/bin/plinth.js); it clears the
 *   remembered response, so a `# →` line after it fails ("no response") instead of checking
 *   an older curl.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { extractBlocks, type Expectation } from './doc-blocks';
import { shapeMismatch } from './shown-json';

export const ROOT = path.resolve(__dirname, '../..');

export interface DocTarget {
  url: string;
  publicKey: string;
  secretKey: string;
  operatorKey: string;
  /** The server's PLINTH_DATA_DIR, exported to the doc too (for `plinth backup`, which reads the files). */
  dataDir?: string;
  /** More variables for the doc (docs/auth.md: its local sign-in providers, see providers-for-docs.ts). */
  env?: { [name: string]: string };
}

export interface DocRun {
  ok: boolean;
  /** The first failure, naming the doc and line; null when ok. */
  failure: string | null;
  blocks: number;
  expectations: number;
  output: string;
}

const PREAMBLE = `set -Eeuo pipefail
__H="$__WORK/.last-headers"; __B="$__WORK/.last-body"
curl() { : > "$__H"; : > "$__B"; command curl -D "$__H" "$@" | tee "$__B"; }
# An arrow after a CLI command must not check an older curl's answer: the CLI clears it.
npx() { : > "$__H"; if [ "\${1:-}" = plinth ]; then shift; node "$__ROOT/clients/cli/bin/plinth.js" "$@"; else command npx "$@"; fi; }
__expect() {
  local got; got=$(grep -aoE '^HTTP/[0-9.]+ [0-9]{3}' "$__H" 2>/dev/null | tail -n 1 | awk '{print $2}' || true)
  if [ "$got" != "$2" ]; then
    echo "__DOC_FAIL__ $1 expected status $2, got \${got:-no response}: $(head -c 1500 "$__B")" >&2
    exit 97
  fi
  cp "$__B" "$__WORK/.expect-$3"
}
# docs/auth.md: plays the user's part at a provider's login page (test/oauth/support).
provider_login() { node "$__ROOT/test/oauth/support/provider-login-cli.mjs" "$@"; }
trap 'echo "__DOC_ERR__ $? $LINENO \${BASH_LINENO[*]}" >&2' ERR
`;

/** Runs `markdown` (named `name` in messages) against `target`; resolves when bash exits. */
export async function runDoc(name: string, markdown: string, target: DocTarget, timeoutMs = 120_000): Promise<DocRun> {
  const blocks = extractBlocks(markdown);
  const expectations: Expectation[] = blocks.flatMap((b) => b.expectations);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-doc-'));
  try {
    fs.symlinkSync(path.join(ROOT, 'examples'), path.join(work, 'examples'));
    const script: string[] = PREAMBLE.split('\n');
    /** script line (1-based) → doc line */
    const lineMap = new Map<number, number>();
    for (const block of blocks) {
      script.push(`# ${name}:${block.line}`);
      for (const l of block.lines) {
        script.push(l.text);
        lineMap.set(script.length, l.line);
      }
    }
    const file = path.join(work, '.doc.sh');
    fs.writeFileSync(file, `${script.join('\n')}\n`);

    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      LANG: 'C.UTF-8',
      PLINTH: target.url,
      PK: target.publicKey,
      SK: target.secretKey,
      ADMIN: target.operatorKey,
      ...(target.dataDir ? { PLINTH_DATA_DIR: target.dataDir } : {}),
      NODE_PATH: path.join(ROOT, 'node_modules'),
      ...target.env,
      __WORK: work,
      __ROOT: ROOT,
    };
    const child = spawn('bash', [file], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
    child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-20_000)));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    clearTimeout(timer);
    const output = `${out}\n--- stderr ---\n${err}`;
    const run = (failure: string | null): DocRun => ({ ok: failure === null, failure, blocks: blocks.length, expectations: expectations.length, output });

    if (timedOut) return run(`${name}: did not finish within ${timeoutMs} ms`);
    const failed = /__DOC_FAIL__ (\d+) (.*)/.exec(err);
    if (failed) return run(`${name}:${failed[1]}: ${failed[2]}`);
    if (code !== 0) {
      // The failing line, or (inside a function such as curl or npx) the line that called it.
      const e = /__DOC_ERR__ (\d+) ([\d ]+)/.exec(err);
      const docLine = e ? e[2]!.trim().split(' ').map((n) => lineMap.get(Number(n))).find((n) => n !== undefined) : undefined;
      const where = docLine ? `${name}:${docLine}` : name;
      return run(`${where}: a command exited with status ${e ? e[1] : code}\n${err.replace(/__DOC_ERR__.*\n?/g, '').slice(-2000)}`);
    }
    for (const [i, x] of expectations.entries()) {
      if (!x.shape) continue;
      const text = fs.readFileSync(path.join(work, `.expect-${i}`), 'utf8');
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        return run(`${name}:${x.line}: the response is not JSON: ${text.slice(0, 500)}`);
      }
      const mismatch = shapeMismatch(x.shape, body);
      if (mismatch) return run(`${name}:${x.line}: ${mismatch} in ${text.slice(0, 1500)}`);
    }
    return run(null);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
