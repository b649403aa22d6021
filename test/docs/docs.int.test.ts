/**
 * Executable docs: every ```sh block of README.md and docs/*.md runs, top to bottom, against a
 * fresh standalone Plinth started as a real process for each doc (its own data directory), so
 * docs never see each other's collections or users. See docs/testing.md, "Docs that run".
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startStandalone, stopStandalone, type StandaloneProcess } from '@plinth/testing/standalone-process';
import { extractBlocks } from './doc-blocks';
import { providersForDocs } from './providers-for-docs';
import { ROOT, runDoc, type DocTarget } from './doc-runner';

/** Fast bcrypt and a quick mail poll: docs read the dev mailbox right after asking for a mail. */
const SERVER_ENV = { PLINTH_BCRYPT_COST: '4', PLINTH_MAIL_POLL_MS: '100' };

/** What a doc asks its reader to start Plinth with (said in the doc itself). */
const DOC_SERVER_ENV: { [doc: string]: { [name: string]: string } } = {
  // A receiver on this machine, and retries short enough to see a dead letter.
  'docs/webhooks.md': { PLINTH_WEBHOOK_ALLOW_HOSTS: '127.0.0.1', PLINTH_WEBHOOK_BACKOFF_MS: '50', PLINTH_WEBHOOK_RETRY_WINDOW_MS: '400', PLINTH_WEBHOOK_DISPATCH_MS: '100', PLINTH_WEBHOOK_POLL_MS: '50' },
};

const DOCS = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];

async function withServer<T>(doc: string, fn: (target: DocTarget) => Promise<T>): Promise<T> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-docs-'));
  let s: StandaloneProcess | undefined;
  // docs/auth.md signs in with providers running on this machine, on a server of known address.
  const providers = doc === 'docs/auth.md' ? await providersForDocs() : null;
  try {
    s = await startStandalone(dataDir, { ...SERVER_ENV, ...DOC_SERVER_ENV[doc], ...providers?.serverEnv });
    const env = await providers?.docEnv();
    return await fn({ url: providers?.publicUrl ?? s.url, publicKey: s.publicKey, secretKey: s.secretKey, operatorKey: s.operatorKey, dataDir, env });
  } finally {
    if (s) await stopStandalone(s);
    await providers?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('every doc runs top to bottom on a fresh standalone server', () => {
  it.each(DOCS)('%s', async (doc) => {
    const markdown = fs.readFileSync(path.join(ROOT, doc), 'utf8');
    // A doc without ```sh blocks needs no server (extracting still checks its fences close).
    if (extractBlocks(markdown).length === 0) return;
    const run = await withServer(doc, (target) => runDoc(doc, markdown, target));
    if (!run.ok) throw new Error(`${run.failure}\n\n${run.output.slice(-3000)}`);
    expect(run.failure).toBeNull();
  }, 150_000);
});

it('no doc points to a file the reader does not have', () => {
  for (const doc of DOCS) {
    const text = fs.readFileSync(path.join(ROOT, doc), 'utf8');
    expect({ doc, cites: /DESIGN\.md|\.\.\/shared|the issue/.exec(text)?.[0] ?? null }).toEqual({ doc, cites: null });
  }
});

describe('the doc runner can fail', () => {
  let target: DocTarget;
  let stop: () => Promise<void>;
  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-docs-neg-'));
    const s = await startStandalone(dataDir, SERVER_ENV);
    target = { url: s.url, publicKey: s.publicKey, secretKey: s.secretKey, operatorKey: s.operatorKey };
    stop = async () => {
      await stopStandalone(s);
      fs.rmSync(dataDir, { recursive: true, force: true });
    };
  }, 60_000);
  afterAll(async () => stop());

  it('fails, naming the line, when an expected status in a copy of README.md is changed', async () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8').split('\n');
    const at = readme.findIndex((l) => /^# → 201\b/.test(l));
    expect(at).toBeGreaterThan(0);
    readme[at] = readme[at]!.replace('# → 201', '# → 200');
    const run = await runDoc('README-copy.md', readme.join('\n'), target);
    expect(run.ok).toBe(false);
    expect(run.failure).toContain(`README-copy.md:${at + 1}: expected status 200, got 201`);
  }, 60_000);

  it('fails when the body lacks a key the doc shows', async () => {
    const doc = [
      '```sh',
      'curl -s "$PLINTH/v1/projects/demo/collections" -H "Authorization: Bearer $PK"',
      '# → 200 {"collections":[],"next_page":…}',
      '```',
    ].join('\n');
    const run = await runDoc('shape.md', doc, target);
    expect(run.failure).toBe('shape.md:3: $: missing key "next_page" in {"collections":[]}');
  });

  it('fails on a failing command and on an unset variable, and never runs ```text fences', async () => {
    const textOnly = ['```text', 'exit 1', '```', '```sh', 'echo fine', '```'].join('\n');
    expect((await runDoc('text.md', textOnly, target)).ok).toBe(true);
    const failing = ['# A doc', '```sh', 'X=1', '```', '', '```sh', 'echo "$X"', 'false', 'echo never', '```'].join('\n');
    expect((await runDoc('failing.md', failing, target)).failure).toMatch(/^failing\.md:8: a command exited with status 1/);
    const afterCli = ['```sh', 'curl -s "$PLINTH/healthz"', 'npx plinth --version', '# → 200', '```'].join('\n');
    expect((await runDoc('after-cli.md', afterCli, target)).failure).toMatch(/^after-cli\.md:4: expected status 200, got no response/);
    const unset = ['```sh', 'echo "$USER_ID_NEVER_SET"', '```'].join('\n');
    expect((await runDoc('unset.md', unset, target)).failure).toMatch(/^unset\.md/);
    expect((await runDoc('unset.md', unset, target)).output).toContain('USER_ID_NEVER_SET: unbound variable');
  });

  it('carries variables from block to block and checks nested shapes through arrays', async () => {
    const doc = [
      '```sh',
      'curl -s -X POST "$PLINTH/v1/projects/demo/collections" -H "Authorization: Bearer $SK" \\',
      '  -H "Content-Type: application/json" -d \'{"name":"runner_probe","fields":{"n":{"type":"integer"}}}\'',
      '# → 201 {"collection":{"name":"runner_probe",…}}',
      'ID=$(curl -s -X POST "$PLINTH/v1/projects/demo/collections/runner_probe/records" -H "Authorization: Bearer $SK" \\',
      '  -H "Content-Type: application/json" -d \'{"data":{"n":1}}\' | jq -r .record.id)',
      '```',
      'Then:',
      '```sh',
      'curl -s "$PLINTH/v1/projects/demo/collections/runner_probe/records/$ID" -H "Authorization: Bearer $SK"',
      '# → 200 {"record":{"id":"rec_…","n":1,',
      '#    "version":1}}',
      'curl -s "$PLINTH/v1/projects/demo/collections/runner_probe/records" -H "Authorization: Bearer $SK"',
      '# → 200 {"records":[{"id":"rec_…","nope":2},…],"cursor":null}',
      '```',
    ].join('\n');
    const run = await runDoc('nested.md', doc, target);
    expect(run.failure).toMatch(/^nested\.md:14: \$\.records\[0\]: missing key "nope"/);
    expect(run.expectations).toBe(3);
  });
});
