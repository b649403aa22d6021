import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { runCli } from '../../clients/cli/src/run';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';

describe('plinth CLI over the operator API', () => {
  let t: TestPlinth;
  let url: string;
  beforeAll(async () => {
    t = await startTestPlinth();
    url = await t.url();
  });
  afterAll(async () => {
    await t.close();
  });

  async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const code = await runCli([...args, '--url', url, '--admin-key', t.adminKey], {
      env: {},
      out: { write: (s: string) => (out += s) },
      err: { write: (s: string) => (err += s) },
    });
    return { code, out, err };
  }

  it('creates, lists, shows and deletes a project; created keys work and revoked ones stop', async () => {
    const created = await cli('projects', 'create', 'cli-shop', '--name', 'CLI Shop');
    expect(created.code).toBe(0);
    const body = JSON.parse(created.out) as { project: { id: string; name: string }; keys: { public: string; secret: string } };
    expect(body.project).toMatchObject({ id: 'cli-shop', name: 'CLI Shop' });
    const auth = await request(t.app).get('/v1/projects/cli-shop/collections').set('Authorization', `Bearer ${body.keys.public}`);
    expect(auth.status).toBe(200);
    expect(auth.body).toEqual({ collections: [] });

    const listed = await cli('projects', 'list');
    expect(JSON.parse(listed.out).projects.map((p: { id: string }) => p.id)).toContain('cli-shop');

    const key = await cli('keys', 'create', 'cli-shop', 'secret');
    expect(key.code).toBe(0);
    const newKey = JSON.parse(key.out).key as { id: string; value: string };
    expect(newKey.value).toMatch(/^sk_/);

    const revoked = await cli('keys', 'revoke', 'cli-shop', newKey.id);
    expect(revoked.code).toBe(0);
    const dead = await request(t.app).get('/v1/projects/cli-shop/collections').set('Authorization', `Bearer ${newKey.value}`);
    expect(dead.status).toBe(401);

    const shown = await cli('projects', 'show', 'cli-shop');
    expect(JSON.parse(shown.out).keys).toHaveLength(2);

    expect((await cli('projects', 'delete', 'cli-shop')).code).toBe(0);
    const missing = await cli('projects', 'show', 'cli-shop');
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('404');
  });

  it('explains usage errors with exit code 2', async () => {
    const r = await cli('keys', 'create', 'cli-shop');
    expect(r.code).toBe(2);
    expect(r.err).toContain('missing key kind');
    const u = await cli('frobnicate');
    expect(u.code).toBe(2);
    expect(u.err).toBe('plinth: unknown command "frobnicate" (see `plinth help`)\n');
    const flag = await cli('records', 'list', 'x', '--frob');
    expect(flag.code).toBe(2);
    expect(flag.err).toBe("plinth: Unknown option '--frob' (see `plinth records --help`)\n");
    const none = await runCli([], { env: {}, out: { write: () => true }, err: { write: (s: string) => (noneErr += s) } });
    expect(none).toBe(2);
    expect(noneErr).toBe('plinth: no command given (see `plinth help`)\n');
  });

  let noneErr = '';

  it('prints help for the CLI and for each command, and its version', async () => {
    const help = await cli('help');
    expect(help.code).toBe(0);
    expect(help.out).toContain('Usage: plinth <command>');
    for (const command of ['projects', 'keys', 'collections', 'records', 'users', 'apply', 'pull', 'doctor']) {
      expect(help.out).toContain(`  ${command} `);
      const own = await cli(command, '--help');
      expect(own.code).toBe(0);
      expect(own.out).toContain(`plinth ${command}`);
      expect((await cli('help', command)).out).toBe(own.out);
    }
    expect(help.out).not.toContain('DESIGN');
    expect((await cli('help', 'frob')).code).toBe(2);
    const version = await cli('--version');
    expect(version.code).toBe(0);
    expect(version.out).toBe(`${(JSON.parse(fs.readFileSync(path.join(__dirname, '../../clients/cli/package.json'), 'utf8')) as { version: string }).version}\n`);
  });

  it('answers --version and help from the built CLI without loading the SDK, a command or the server', () => {
    // What `npx plinth --version` runs (clients/cli/bin → dist): the modules it loads, besides node's own.
    const script = `const { runCli } = require('./clients/cli/dist/run.js');
const io = { env: {}, out: { write: () => true }, err: process.stderr };
runCli(['--version'], io).then(() => runCli(['help', 'records'], io)).then(() => process.stdout.write(JSON.stringify(Object.keys(require.cache))));`;
    const loaded = (JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: path.join(__dirname, '../..'), encoding: 'utf8' })) as string[]).map((f) =>
      path.relative(path.join(__dirname, '../..'), f),
    );
    expect(loaded.sort()).toEqual(['clients/cli/dist/client.js', 'clients/cli/dist/flags.js', 'clients/cli/dist/run.js', 'clients/cli/dist/usage.js']);
  });

  it('reports a wrong operator key as an error', async () => {
    let err = '';
    const code = await runCli(['projects', 'list', '--url', url, '--admin-key', 'adm_wrong-key-00000000000000'], {
      env: {},
      out: { write: () => true },
      err: { write: (s: string) => (err += s) },
    });
    expect(code).toBe(1);
    expect(err).toContain('401');
  });
});
