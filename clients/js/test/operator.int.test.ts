import { ConflictError, PlinthError, createOperatorClient, probe, type OperatorClient } from '../src/operator';
import { createAdminClient } from '../src/admin';
import { startSdkFixture, type SdkFixture } from './fixture';

/** `@plinth/client/operator` (the operator API, /v1/admin) against a real standalone Plinth. */
describe('@plinth/client/operator', () => {
  let f: SdkFixture;
  let op: OperatorClient;
  beforeAll(async () => {
    f = await startSdkFixture();
    op = createOperatorClient({ url: f.url, adminKey: f.t.adminKey });
  });
  afterAll(async () => {
    await f.close();
  });

  it('projects: create (keys shown once), list, get, export with hashed keys; an import of a taken id is a 409 naming the request', async () => {
    const made = await op.projects.create({ id: 'sdk-op-project', name: 'SDK operator' });
    expect(made).toMatchObject({ project: { id: 'sdk-op-project', name: 'SDK operator' }, keys: { public: expect.stringMatching(/^pk_/), secret: expect.stringMatching(/^sk_/) } });
    expect((await op.projects.list()).map((p) => p.id)).toEqual(expect.arrayContaining(['sdk-op-project', f.project]));
    const shown = await op.projects.get('sdk-op-project');
    expect(shown.keys.map((k) => k.kind).sort()).toEqual(['public', 'secret']);
    expect(JSON.stringify(shown)).not.toContain(made.keys.secret);
    const exported = await op.projects.export('sdk-op-project');
    expect(exported.keys).toHaveLength(2);
    expect(exported.keys[0]).toMatchObject({ hash: expect.any(String), prefix: expect.any(String) });
    const err = await op.projects.import(exported).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConflictError);
    expect(err).toMatchObject({ status: 409, request: 'POST /v1/admin/projects/import' });
    expect(await op.projects.delete('sdk-op-project')).toMatchObject({ deleted: true, id: 'sdk-op-project' });
    await expect(op.projects.get('sdk-op-project')).rejects.toMatchObject({ status: 404, code: 'not_found', request: 'GET /v1/admin/projects/sdk-op-project' });
  });

  it('keys: a new secret key works at once, and not after it is revoked', async () => {
    const key = await op.keys.create(f.project, 'secret');
    expect(key).toMatchObject({ kind: 'secret', value: expect.stringMatching(/^sk_/) });
    const admin = createAdminClient({ url: f.url, project: f.project, secretKey: key.value });
    await expect(admin.collections.list()).resolves.toEqual(expect.any(Array));
    expect(await op.keys.revoke(f.project, key.id)).toEqual({ deleted: true, id: key.id });
    await expect(admin.collections.list()).rejects.toMatchObject({ status: 401 });
  });

  it('operators and their sessions: create, sign in, list own sessions with the session token, change role, revoke, delete', async () => {
    const created = await op.operators.create({ email: 'sdk-viewer@example.com', role: 'viewer', password: 'a long operator password' });
    expect(created).toMatchObject({ email: 'sdk-viewer@example.com', role: 'viewer', status: 'active', totp: false });
    expect((await op.operators.list()).map((o) => o.id)).toContain(created.id);
    const signIn = await fetch(`${f.url}/v1/admin/sessions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: 'sdk-viewer@example.com', password: 'a long operator password' }),
    });
    const { token } = (await signIn.json()) as { token: string };
    const viewer = createOperatorClient({ url: f.url, adminKey: token });
    const mine = await viewer.sessions.list();
    expect(mine).toEqual([expect.objectContaining({ operator_id: created.id, current: true })]);
    // A viewer reads projects but may not manage operators.
    await expect(viewer.projects.list()).resolves.toEqual(expect.any(Array));
    await expect(viewer.operators.list()).rejects.toMatchObject({ status: 403 });
    expect(await op.operators.update(created.id, { role: 'admin' })).toMatchObject({ role: 'admin' });
    expect(await op.operators.resetTotp(created.id)).toMatchObject({ totp: false });
    expect((await op.sessions.list()).map((s) => s.id)).toContain(mine[0]!.id);
    expect(await op.sessions.revoke(mine[0]!.id)).toEqual({ deleted: true, id: mine[0]!.id });
    await expect(viewer.sessions.list()).rejects.toMatchObject({ status: 401 });
    expect(await op.operators.delete(created.id)).toEqual({ deleted: true, id: created.id });
    await expect(op.operators.get(created.id)).rejects.toMatchObject({ status: 404 });
  });

  it('audit: newest first, filtered, a page at a time', async () => {
    await op.projects.list();
    const first = await op.audit({ actor: 'bootstrap', limit: 1 });
    expect(first.entries).toHaveLength(1);
    expect(first.entries[0]).toMatchObject({ actor_kind: 'bootstrap', method: expect.any(String), path: expect.stringMatching(/^\/v1\/admin\//) });
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await op.audit({ actor: 'bootstrap', limit: 1, cursor: first.next_cursor! });
    expect(second.entries[0]!.id < first.entries[0]!.id).toBe(true);
    await expect(op.audit({ limit: 0 })).rejects.toMatchObject({ status: 400, code: 'invalid_request' });
  });

  it('server info, keyless health probes, and a refused operator key', async () => {
    expect(await op.server()).toHaveProperty('public_url');
    expect(await probe(f.url, 'healthz')).toMatchObject({ service: 'gateway' });
    expect(await probe(f.url, 'readyz')).toMatchObject({ status: 'ready' });
    const down = await probe('http://127.0.0.1:9', 'healthz').catch((e: unknown) => e);
    expect(down).toBeInstanceOf(PlinthError);
    expect(down).toMatchObject({ status: 0, code: 'network_error' });
    await expect(createOperatorClient({ url: f.url, adminKey: 'adm_wrong' }).projects.list()).rejects.toMatchObject({ status: 401 });
    expect(() => createOperatorClient({ url: f.url, adminKey: '' })).toThrow(TypeError);
  });
});
