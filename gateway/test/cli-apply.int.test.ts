/**
 * `plinth apply` is safe against a live gateway (real HTTP): it validates everything (rules
 * included) before changing anything, refuses to delete data unless --allow-data-loss names it,
 * prints the plan first, and a run that fails half-way is completed by a re-run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../../clients/cli/src/run';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';

describe('plinth apply: validate first, no silent data loss, resumable', () => {
  let t: TestPlinth;
  let url: string;
  let dir: string;
  beforeAll(async () => {
    t = await startTestPlinth();
    url = await t.url();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-apply-'));
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh project, the CLI and the API as its secret key. */
  async function project() {
    const p = await t.createProject();
    const cli = async (...args: string[]) => cliWith({}, ...args);
    const cliWith = async (extraEnv: Record<string, string>, ...args: string[]) => {
      let out = '';
      let err = '';
      const code = await runCli(args, {
        env: { PLINTH: url, PLINTH_PROJECT: p.id, PLINTH_SECRET_KEY: p.secretKey, ...extraEnv },
        out: { write: (s: string) => (out += s) },
        err: { write: (s: string) => (err += s) },
      });
      return { code, out, err };
    };
    const api = async (method: string, rest: string, body?: unknown): Promise<{ status: number; body: any }> => {
      const res = await fetch(`${url}/v1/projects/${p.id}${rest}`, {
        method,
        headers: { Authorization: `Bearer ${p.secretKey}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: res.status, body: await res.json() };
    };
    const pull = async () => JSON.parse((await cli('pull', '-')).out) as { collections: { [name: string]: unknown } };
    return { cli, cliWith, api, pull };
  }
  const file = (name: string, value: unknown): string => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, JSON.stringify(value));
    return p;
  };

  it('an invalid rule changes nothing, and --dry-run answers the same error as the real run', async () => {
    const { cli, api, pull } = await project();
    await api('POST', '/collections', { name: 'tasks', fields: { owner: { type: 'text' } } });
    const before = await pull();
    const bad = file('bad-rule.json', {
      collections: {
        notes: { fields: { body: { type: 'text' } }, rules: { read: 'true' } },
        tasks: { fields: { owner: { type: 'text' } }, rules: { read: 'record.ownr == auth.uid' } },
      },
    });
    const dry = await cli('apply', bad, '--dry-run');
    const real = await cli('apply', bad);
    expect(dry.code).toBe(1);
    expect(real.code).toBe(1);
    expect(dry.err).toContain('nothing changed');
    expect(dry.err).toContain('tasks: 400 invalid_request');
    expect(dry.err).toContain('"field":"rules.read"');
    expect(real.err).toBe(dry.err);
    expect(real.out).toContain('+ create collection notes');
    expect(await pull()).toEqual(before);
    expect((await api('GET', '/collections/notes')).status).toBe(404);
  });

  it('refuses to drop a field or a collection that holds data unless --allow-data-loss names it', async () => {
    const { cli, api, pull } = await project();
    await api('POST', '/collections', { name: 'todos', fields: { title: { type: 'text' }, note: { type: 'text' }, spare: { type: 'text' } } });
    await api('POST', '/collections', { name: 'old', fields: { x: { type: 'integer' } } });
    const rec = (await api('POST', '/collections/todos/records', { data: { title: 'a', note: 'keep me' } })).body.record;
    await api('POST', '/collections/old/records', { data: { x: 1 } });
    const before = await pull();
    // `spare` holds no value: dropping it needs no flag; `note` and `old` hold data.
    const target = file('drop.json', { collections: { todos: { fields: { title: { type: 'text' } }, rules: {} }, old: null } });

    for (const args of [['--dry-run'], []]) {
      const refused = await cli('apply', target, ...args);
      expect(refused.code).toBe(1);
      expect(refused.out).toContain('~ update collection todos: - field note (its values are deleted), - field spare (its values are deleted)');
      expect(refused.out).toContain('- delete collection old (its records are deleted)');
      expect(refused.err).toContain('todos.note holds data: deleting it needs --allow-data-loss todos.note');
      expect(refused.err).toContain('old holds data: deleting it needs --allow-data-loss old');
      expect(refused.err).not.toContain('todos.spare');
    }
    expect(await pull()).toEqual(before);
    expect((await api('GET', `/collections/todos/records/${rec.id}`)).body.record.note).toBe('keep me');

    const onlyField = await cli('apply', target, '--allow-data-loss', 'todos.note');
    expect(onlyField.code).toBe(1);
    expect(onlyField.err).toContain('old holds data');
    expect(await pull()).toEqual(before);

    const applied = await cli('apply', target, '--allow-data-loss', 'todos.note,old');
    expect(applied.code).toBe(0);
    expect(applied.out).toContain('2 collection(s) changed');
    expect(await pull()).toEqual({ collections: { todos: { fields: { title: { type: 'text' } }, rules: {} } } });
    expect((await api('GET', `/collections/todos/records/${rec.id}`)).body.record.note).toBeUndefined();
    expect((await cli('apply', target)).out).toContain('no changes');
    expect((await cli('apply', target, '--allow-data-loss', 'todos.no-such')).code).toBe(2);
  });

  it('a failure half-way says what was applied, and a re-run after fixing the cause completes it', async () => {
    const { cli, api, pull } = await project();
    await api('POST', '/collections', { name: 'beta', fields: { title: { type: 'text' } } });
    await api('POST', '/collections/beta/records', { data: { title: 'same' } });
    const dup = (await api('POST', '/collections/beta/records', { data: { title: 'same' } })).body.record;
    const wanted = {
      collections: {
        alpha: { fields: { n: { type: 'integer' } }, rules: { read: 'true' } },
        beta: { fields: { title: { type: 'text', unique: true } }, rules: {} },
      },
    };
    const target = file('halfway.json', wanted);

    // The server refuses `unique` while two records share a title: the second step fails.
    const first = await cli('apply', target);
    expect(first.code).toBe(1);
    expect(first.out).toContain('+ create collection alpha');
    expect(first.err).toContain('→ 409 conflict');
    expect(first.err).toContain('1 of 2 step(s) applied; collection beta and the ones after it were not changed');
    expect(first.err).toContain('run apply again');
    expect((await pull()).collections).toEqual({ ...wanted.collections, beta: { fields: { title: { type: 'text' } }, rules: {} } });

    await api('DELETE', `/collections/beta/records/${dup.id}`);
    const again = await cli('apply', target);
    expect(again.code).toBe(0);
    expect(again.out).not.toContain('alpha');
    expect(again.out).toContain('~ update collection beta');
    expect(again.out).toContain('1 collection(s) changed');
    expect(await pull()).toEqual(wanted);
  });

  it('an auth section turns Auth and a provider on, checked before anything changes; the secret comes from the environment', async () => {
    const { cli, cliWith, api } = await project();
    const settings = async () => (await api('GET', '/settings/auth')).body;
    const auth = {
      enabled: true,
      allow_anonymous: true,
      redirect_urls: ['https://app.example.com/done'],
      providers: { github: { client_id: 'gh-client', client_secret: { env: 'GH_SECRET' } } },
    };
    const target = file('auth.json', { collections: { notes: { fields: { body: { type: 'text' } }, rules: {} } }, auth });

    const noSecret = await cli('apply', target);
    expect(noSecret.code).toBe(1);
    expect(noSecret.err).toContain('auth.providers.github: its client secret is needed: set GH_SECRET in the environment');
    expect(noSecret.err).toContain('nothing changed');
    const invalid = file('auth-bad.json', { collections: { notes: { fields: {}, rules: {} } }, auth: { providers: { microsoft: { client_id: 'ms', client_secret: { env: 'GH_SECRET' } } } } });
    const dryBad = await cliWith({ GH_SECRET: 'shh-secret-1' }, 'apply', invalid, '--dry-run');
    const realBad = await cliWith({ GH_SECRET: 'shh-secret-1' }, 'apply', invalid);
    expect(dryBad.code).toBe(1);
    expect(dryBad.err).toContain('auth: 400 invalid_request: providers.microsoft.tenant is required');
    expect(realBad.err).toBe(dryBad.err);
    expect(`${dryBad.out}${dryBad.err}${realBad.out}${realBad.err}`).not.toContain('shh-secret-1');
    expect((await settings()).enabled).toBe(false);
    expect((await api('GET', '/collections/notes')).status).toBe(404);
    const literal = await cli('apply', file('auth-literal.json', { collections: {}, auth: { providers: { github: { client_id: 'x', client_secret: 'inline' } } } }));
    expect(literal.code).toBe(2);
    expect(literal.err).toContain('client_secret must be {"env": "VARIABLE"}');

    const dry = await cliWith({ GH_SECRET: 'shh-secret-1' }, 'apply', target, '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.out).toContain('(dry run) ~ update Auth settings: ~ enabled false → true, ~ allow_anonymous false → true, ~ redirect_urls [] → ["https://app.example.com/done"], + provider github (secret from the environment)');
    expect((await settings()).enabled).toBe(false);
    const real = await cliWith({ GH_SECRET: 'shh-secret-1' }, 'apply', target);
    expect(real.code).toBe(0);
    expect(real.out).toContain('1 collection(s) and the Auth settings changed');
    expect(real.out).not.toContain('shh-secret-1');
    const now = await settings();
    expect(now).toMatchObject({ enabled: true, allow_anonymous: true, redirect_urls: ['https://app.example.com/done'] });
    expect(now.providers.github).toMatchObject({ client_id: 'gh-client', enabled: true, client_secret_set: true });
    expect((await cliWith({ GH_SECRET: 'shh-secret-1' }, 'apply', target)).out).toContain('no changes');

    // pull --auth writes the settings with the secret as a variable; applying it back changes nothing.
    const pulled = JSON.parse((await cli('pull', '-', '--auth')).out);
    expect(pulled.auth.providers.github).toEqual({ enabled: true, client_id: 'gh-client', client_secret: { env: 'PLINTH_GITHUB_CLIENT_SECRET' } });
    expect(JSON.stringify(pulled)).not.toContain('shh-secret-1');
    expect((await cli('apply', file('pulled-auth.json', pulled))).out).toContain('no changes');
    const off = await cli('apply', file('auth-off.json', { collections: {}, auth: { enabled: false, providers: { github: null } } }));
    expect(off.out).toContain('~ update Auth settings: ~ enabled true → false, - provider github');
    expect(await settings()).toMatchObject({ enabled: false, providers: {} });
  });
});
