/**
 * The CLI works from its packed tarball outside the repository: `npm run pack:cli`, then
 * `npx ./plinth-cli-<version>.tgz …` in an empty temporary directory, against a live gateway.
 */
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';

const ROOT = path.resolve(__dirname, '../..');

describe('the packed CLI', () => {
  let t: TestPlinth;
  let dir: string;
  beforeAll(async () => {
    t = await startTestPlinth();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-cli-pack-test-'));
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('packs without workspace dependencies (the SDK bundled in) and runs help, --version and a command via npx from a temp dir', async () => {
    const tgz = execFileSync('node', [path.join(ROOT, 'clients/cli/scripts/pack-cli.js'), dir], { cwd: ROOT, encoding: 'utf8' }).trim();
    const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'clients/cli/package.json'), 'utf8')) as { version: string };
    expect(tgz).toBe(path.join(dir, `plinth-cli-${version}.tgz`));
    const listing = execFileSync('tar', ['-xzOf', tgz, 'package/package.json'], { encoding: 'utf8' });
    const pkg = JSON.parse(listing) as { name: string; bin: Record<string, string>; dependencies?: unknown };
    expect(pkg).toMatchObject({ name: 'plinth-cli', bin: { plinth: 'bin/plinth.js' } });
    expect(pkg.dependencies).toBeUndefined();

    const env: NodeJS.ProcessEnv = { ...process.env, npm_config_yes: 'true', npm_config_cache: path.join(dir, 'npm-cache'), PLINTH_ADMIN_KEY: t.adminKey, PLINTH_URL: await t.url() };
    delete env.npm_config_prefix;
    // Asynchronous: the gateway answering `projects list` runs in this process.
    const npx = async (...args: string[]) =>
      (await promisify(execFile)('npx', ['--yes', `./${path.basename(tgz)}`, ...args], { cwd: dir, env, encoding: 'utf8', timeout: 60_000 })).stdout;
    expect(await npx('help')).toContain('Usage: plinth <command>');
    expect((await npx('--version')).trim()).toBe(version);
    const projects = JSON.parse(await npx('projects', 'list')) as { projects: Array<{ id: string }> };
    expect(projects.projects.map((p) => p.id)).toContain(t.project.id);
    let code = 0;
    let stderr = '';
    try {
      await npx('frob');
    } catch (e) {
      code = (e as { code: number }).code;
      stderr = String((e as { stderr: string }).stderr);
    }
    expect(code).toBe(2);
    expect(stderr).toContain('plinth: unknown command "frob" (see `plinth help`)');
    // backup/restore read a data directory with better-sqlite3, which the packed CLI does not ship.
    code = 0;
    try {
      await npx('backup', path.join(dir, 'backup'));
    } catch (e) {
      code = (e as { code: number }).code;
      stderr = String((e as { stderr: string }).stderr);
    }
    expect(code).toBe(1);
    expect(stderr).toContain('plinth: backup and restore run from a Plinth installation (next to its data directory), not from the packed CLI');
  }, 90_000);
});
