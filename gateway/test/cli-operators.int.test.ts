import { Readable } from 'node:stream';
import request from 'supertest';
import { runCli } from '../../clients/cli/src/run';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';

/** `plinth operators`, `plinth sessions` and `plinth audit` against a real gateway, with the operator key. */
describe('plinth CLI: operators, sessions, audit', () => {
  let t: TestPlinth;
  let url: string;
  const PASSWORD = 'cli operator password';
  beforeAll(async () => {
    t = await startTestPlinth();
    url = await t.url();
  });
  afterAll(async () => {
    await t.close();
  });

  async function cli(args: string[], opts: { env?: NodeJS.ProcessEnv; stdin?: string } = {}) {
    let out = '';
    let err = '';
    const code = await runCli([...args, '--url', url, '--admin-key', t.adminKey], {
      env: opts.env ?? {},
      out: { write: (s: string) => (out += s) },
      err: { write: (s: string) => (err += s) },
      stdin: opts.stdin === undefined ? undefined : Readable.from([opts.stdin]),
    });
    return { code, out, err };
  }
  const signIn = (email: string) => request(t.app).post('/v1/admin/sessions').send({ email, password: PASSWORD });

  it('creates operators (password from stdin or the environment, never a flag) and lists them', async () => {
    const owner = await cli(['operators', 'create', '--email', 'Owner@cli.example', '--role', 'owner', '--password-stdin'], { stdin: `${PASSWORD}\n` });
    expect(owner.code).toBe(0);
    expect(JSON.parse(owner.out).operator).toMatchObject({ email: 'owner@cli.example', role: 'owner', status: 'active', totp: false });
    expect(owner.out).not.toContain(PASSWORD);
    const viewer = await cli(['operators', 'create', '--email', 'viewer@cli.example', '--role', 'viewer'], { env: { PLINTH_OPERATOR_PASSWORD: PASSWORD } });
    expect(viewer.code).toBe(0);
    const none = await cli(['operators', 'create', '--email', 'x@cli.example', '--role', 'viewer']);
    expect(none.code).toBe(2);
    expect(none.err).toContain('--password-stdin');
    const listed = JSON.parse((await cli(['operators', 'list'])).out).operators as Array<{ email: string }>;
    expect(listed.map((o) => o.email)).toEqual(['owner@cli.example', 'viewer@cli.example']);
    expect((await signIn('viewer@cli.example')).status).toBe(201);
  });

  it('changes a role, disables (ending sessions) and enables by e-mail, lists and revokes sessions', async () => {
    const token = (await signIn('viewer@cli.example')).body.token as string;
    expect(JSON.parse((await cli(['operators', 'set-role', 'viewer@cli.example', 'admin'])).out).operator.role).toBe('admin');
    const sessions = JSON.parse((await cli(['sessions', 'list'])).out).sessions as Array<{ id: string }>;
    expect(sessions.length).toBeGreaterThanOrEqual(2);
    expect(JSON.stringify(sessions)).not.toContain(token);
    expect((await cli(['sessions', 'revoke', sessions[0]!.id])).code).toBe(0);
    expect((await cli(['sessions', 'revoke', sessions[0]!.id])).code).toBe(1);
    const second = (await signIn('viewer@cli.example')).body.token as string;
    expect((await cli(['operators', 'disable', 'viewer@cli.example'])).code).toBe(0);
    expect((await request(t.app).get('/v1/admin/me').set('Authorization', `Bearer ${second}`)).status).toBe(401);
    expect((await signIn('viewer@cli.example')).status).toBe(401);
    expect((await cli(['operators', 'enable', 'viewer@cli.example'])).code).toBe(0);
    expect((await signIn('viewer@cli.example')).status).toBe(201);
    const unknown = await cli(['operators', 'disable', 'nobody@cli.example']);
    expect(unknown.code).toBe(2);
  });

  it('prints the audit log, filtered and paged', async () => {
    const byOwnerKey = JSON.parse((await cli(['audit', '--actor', 'bootstrap', '--limit', '2'])).out) as { entries: Array<{ actor: string; path: string }>; next_cursor: string | null };
    expect(byOwnerKey.entries).toHaveLength(2);
    expect(byOwnerKey.entries.every((e) => e.actor === 'bootstrap')).toBe(true);
    expect(byOwnerKey.next_cursor).toMatch(/^aud_/);
    const next = JSON.parse((await cli(['audit', '--actor', 'bootstrap', '--limit', '2', '--cursor', byOwnerKey.next_cursor!])).out) as { entries: Array<{ id: string }> };
    expect(next.entries.length).toBeGreaterThan(0);
    const signIns = JSON.parse((await cli(['audit', '--actor', 'viewer@cli.example'])).out).entries as Array<{ path: string; status: number }>;
    expect(signIns.filter((e) => e.path === '/v1/admin/sessions').map((e) => e.status)).toEqual(expect.arrayContaining([201, 401]));
    const bad = await cli(['audit', '--limit', 'lots']);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('400');
  });

  it('deletes an operator; the last owner stays', async () => {
    expect((await cli(['operators', 'delete', 'viewer@cli.example'])).code).toBe(0);
    const last = await cli(['operators', 'delete', 'owner@cli.example']);
    expect(last.code).toBe(1);
    expect(last.err).toContain('409');
  });
});
