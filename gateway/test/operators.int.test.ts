import request from 'supertest';
import { operatorTotpCode } from '../src/operators/totp';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';

/**
 * Named operators through the real standalone gateway: roles, sessions (refresh, revocation,
 * disabling), project access as a secret key without one being made, and the audit log.
 */
describe('named operators, sessions and the audit log', () => {
  let t: TestPlinth;
  const boot = () => ({ Authorization: `Bearer ${t.adminKey}` });
  const as = (token: string) => ({ Authorization: `Bearer ${token}` });
  const PASSWORD = 'operator suite password';
  const ops: { [role: string]: { id: string; email: string; token: string } } = {};

  async function signIn(email: string, password = PASSWORD, code?: string) {
    return request(t.app).post('/v1/admin/sessions').send({ email, password, ...(code ? { code } : {}) });
  }

  beforeAll(async () => {
    t = await startTestPlinth();
    for (const role of ['owner', 'admin', 'viewer']) {
      const email = `${role}@ops.example`;
      const created = await request(t.app).post('/v1/admin/operators').set(boot()).send({ email, password: PASSWORD, role });
      expect(created.status).toBe(201);
      expect(JSON.stringify(created.body)).not.toContain(PASSWORD);
      const s = await signIn(email);
      expect(s.status).toBe(201);
      ops[role] = { id: created.body.operator.id, email, token: s.body.token };
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  it('signs in with e-mail and password only: a wrong password or an unknown e-mail is 401, the same message', async () => {
    const wrong = await signIn('admin@ops.example', 'not the password at all');
    const unknown = await signIn('nobody@ops.example');
    expect([wrong.status, unknown.status]).toEqual([401, 401]);
    expect(wrong.body.message).toBe(unknown.body.message);
    const s = await signIn('ADMIN@ops.example');
    expect(s.status).toBe(201);
    expect(s.body.token).toMatch(/^ops_/);
    expect(s.body.operator).toEqual(expect.objectContaining({ email: 'admin@ops.example', role: 'admin', totp: false }));
    expect(Object.keys(s.body.operator)).not.toContain('password_hash');
  });

  it('a viewer reads projects and their data but changes nothing; an admin changes them; only an owner manages operators', async () => {
    const pid = t.project.id;
    const v = as(ops.viewer!.token);
    expect((await request(t.app).get('/v1/admin/projects').set(v)).status).toBe(200);
    expect((await request(t.app).get(`/v1/projects/${pid}/collections`).set(v)).status).toBe(200);
    const refused = await request(t.app).post('/v1/admin/projects').set(v).send({ id: 'viewer-made' });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: 'forbidden', details: { role: 'viewer', needed: 'admin' } });
    const rules = await request(t.app).post(`/v1/projects/${pid}/collections`).set(v).send({ name: 'notes', fields: { title: { type: 'text' } }, rules: { read: 'true' } });
    expect(rules.status).toBe(403);
    expect(rules.body.message).toContain('viewer');
    expect((await request(t.app).post(`/v1/admin/projects/${pid}/keys`).set(v).send({ kind: 'secret' })).status).toBe(403);
    expect((await request(t.app).get('/v1/admin/operators').set(v)).status).toBe(403);

    const a = as(ops.admin!.token);
    const made = await request(t.app).post(`/v1/projects/${pid}/collections`).set(a).send({ name: 'notes', fields: { title: { type: 'text' } }, rules: { read: 'true' } });
    expect(made.status).toBe(201);
    const changed = await request(t.app).patch(`/v1/projects/${pid}/collections/notes`).set(v).send({ rules: { read: 'false' } });
    expect(changed.status).toBe(403);
    const rec = await request(t.app).post(`/v1/projects/${pid}/collections/notes/records`).set(a).send({ data: { title: 'by an admin' } });
    expect(rec.status).toBe(201);
    // A viewer may still check and simulate rules (a POST that changes nothing), and read records.
    const validated = await request(t.app).post(`/v1/projects/${pid}/collections/notes/rules/validate`).set(v).send({ rules: { read: 'auth != null' } });
    expect(validated.status).toBe(200);
    expect((await request(t.app).get(`/v1/projects/${pid}/collections/notes/records`).set(v)).body.records).toHaveLength(1);
    expect((await request(t.app).get('/v1/admin/operators').set(a)).status).toBe(403);
    expect((await request(t.app).get('/v1/admin/operators').set(as(ops.owner!.token))).body.operators).toHaveLength(3);
  });

  it('acting on projects as an operator creates no project key', async () => {
    const before = (await request(t.app).get(`/v1/admin/projects/${t.project.id}`).set(boot())).body.keys.length;
    for (const role of ['viewer', 'admin', 'owner']) {
      expect((await request(t.app).get(`/v1/projects/${t.project.id}/collections`).set(as(ops[role]!.token))).status).toBe(200);
    }
    expect((await request(t.app).get(`/v1/admin/projects/${t.project.id}`).set(boot())).body.keys).toHaveLength(before);
  });

  it('lists sessions (an owner all, others their own), revokes one at once, and signs out', async () => {
    const extra = (await signIn('viewer@ops.example')).body;
    const mine = await request(t.app).get('/v1/admin/sessions').set(as(extra.token));
    expect(mine.body.sessions.every((s: { operator_id: string }) => s.operator_id === ops.viewer!.id)).toBe(true);
    expect(mine.body.sessions.filter((s: { current: boolean }) => s.current)).toHaveLength(1);
    expect(JSON.stringify(mine.body)).not.toMatch(/ops_[A-Za-z0-9_-]{40}|token_hash/);
    const all = await request(t.app).get('/v1/admin/sessions').set(as(ops.owner!.token));
    expect(new Set(all.body.sessions.map((s: { operator_id: string }) => s.operator_id)).size).toBeGreaterThanOrEqual(3);
    // An admin cannot revoke another operator's session; the owner can.
    expect((await request(t.app).delete(`/v1/admin/sessions/${extra.session.id}`).set(as(ops.admin!.token))).status).toBe(404);
    expect((await request(t.app).delete(`/v1/admin/sessions/${extra.session.id}`).set(as(ops.owner!.token))).status).toBe(200);
    const after = await request(t.app).get('/v1/admin/me').set(as(extra.token));
    expect(after.status).toBe(401);
    expect(after.body.message).toContain('expired or was revoked');
    expect((await request(t.app).get(`/v1/projects/${t.project.id}/collections`).set(as(extra.token))).status).toBe(401);
    const other = (await signIn('viewer@ops.example')).body.token;
    expect((await request(t.app).delete('/v1/admin/sessions/current').set(as(other))).status).toBe(200);
    expect((await request(t.app).get('/v1/admin/me').set(as(other))).status).toBe(401);
  });

  it('refreshes a session, never past its maximum', async () => {
    const s = (await signIn('admin@ops.example')).body;
    const refreshed = await request(t.app).post('/v1/admin/sessions/refresh').set(as(s.token));
    expect(refreshed.status).toBe(200);
    expect(Date.parse(refreshed.body.session.expires_at)).toBeGreaterThanOrEqual(Date.parse(s.session.expires_at));
    expect(Date.parse(refreshed.body.session.expires_at)).toBeLessThanOrEqual(Date.parse(s.session.max_expires_at));
  });

  it('disabling an operator ends its sessions; the last owner cannot be disabled or deleted', async () => {
    const owner = as(ops.owner!.token);
    const tmp = await request(t.app).post('/v1/admin/operators').set(owner).send({ email: 'tmp@ops.example', password: PASSWORD, role: 'admin' });
    const token = (await signIn('tmp@ops.example')).body.token;
    expect((await request(t.app).patch(`/v1/admin/operators/${tmp.body.operator.id}`).set(owner).send({ status: 'disabled' })).status).toBe(200);
    expect((await request(t.app).get('/v1/admin/me').set(as(token))).status).toBe(401);
    expect((await signIn('tmp@ops.example')).status).toBe(401);
    expect((await request(t.app).delete(`/v1/admin/operators/${tmp.body.operator.id}`).set(owner)).status).toBe(200);
    const last = await request(t.app).patch(`/v1/admin/operators/${ops.owner!.id}`).set(owner).send({ role: 'admin' });
    expect(last.status).toBe(409);
    expect(last.body.details.reason).toBe('last_owner');
    const bad = await request(t.app).post('/v1/admin/operators').set(owner).send({ email: 'not-an-email', password: 'short', role: 'root' });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.details.fields).sort()).toEqual(['email', 'password', 'role']);
  });

  it('enrols TOTP: then sign-in needs a right code, used once', async () => {
    await request(t.app).post('/v1/admin/operators').set(boot()).send({ email: 'mfa@ops.example', password: PASSWORD, role: 'viewer' });
    const token = (await signIn('mfa@ops.example')).body.token;
    const enrol = await request(t.app).post('/v1/admin/me/totp').set(as(token));
    expect(enrol.status).toBe(201);
    expect(enrol.body.uri).toMatch(/^otpauth:\/\/totp\//);
    expect((await request(t.app).post('/v1/admin/me/totp/confirm').set(as(token)).send({ code: '000000' })).status).toBe(401);
    // The code just used to confirm is spent; the next step's code signs in.
    const confirmed = await request(t.app).post('/v1/admin/me/totp/confirm').set(as(token)).send({ code: operatorTotpCode(enrol.body.secret) });
    expect(confirmed.body.operator.totp).toBe(true);
    const without = await signIn('mfa@ops.example');
    expect(without.status).toBe(401);
    expect(without.body.details).toEqual({ code_required: true });
    const next = operatorTotpCode(enrol.body.secret, Date.now() + 30_000);
    expect((await signIn('mfa@ops.example', PASSWORD, next)).status).toBe(201);
    expect((await signIn('mfa@ops.example', PASSWORD, next)).status).toBe(401);
  });

  it('audits every mutating operator and secret-key call — who, what, when, from where — and never a secret', async () => {
    const pid = t.project.id;
    await request(t.app).post(`/v1/projects/${pid}/collections/notes/records`).set(as(t.project.secretKey)).send({ data: { title: 'by the secret key' } });
    await request(t.app).post(`/v1/projects/${pid}/collections/notes/records`).set(as(t.project.publicKey)).send({ data: { title: 'public: not audited' } });
    await request(t.app).post(`/v1/admin/projects/${pid}/keys`).set(as(ops.viewer!.token)).send({ kind: 'secret' });
    const res = await request(t.app).get('/v1/admin/audit').query({ limit: 200 }).set(as(ops.viewer!.token));
    expect(res.status).toBe(200);
    const entries = res.body.entries as Array<{ actor_kind: string; actor: string; method: string; path: string; status: number; project: string | null; address: string | null }>;
    const text = JSON.stringify(res.body);
    for (const secret of [PASSWORD, t.adminKey, t.project.secretKey, t.project.publicKey, ops.admin!.token, 'by the secret key', '$2b$']) {
      expect(text).not.toContain(secret);
    }
    expect(entries).toContainEqual(expect.objectContaining({ actor_kind: 'key', actor: `${t.project.secretKey.slice(0, 8)}…`, method: 'POST', path: `/v1/projects/${pid}/collections/notes/records`, status: 201, project: pid }));
    expect(entries).toContainEqual(expect.objectContaining({ actor_kind: 'operator', actor: 'admin@ops.example', method: 'POST', path: `/v1/projects/${pid}/collections`, status: 201, project: pid }));
    expect(entries).toContainEqual(expect.objectContaining({ actor: 'viewer@ops.example', method: 'POST', path: `/v1/admin/projects/${pid}/keys`, status: 403 }));
    expect(entries).toContainEqual(expect.objectContaining({ actor_kind: 'bootstrap', method: 'POST', path: '/v1/admin/operators', status: 201 }));
    expect(entries).toContainEqual(expect.objectContaining({ actor: 'nobody@ops.example', path: '/v1/admin/sessions', status: 401 }));
    expect(entries.filter((e) => e.actor_kind === 'key').every((e) => !e.path.includes('rules/validate'))).toBe(true);
    expect(entries.every((e) => typeof e.address === 'string' && e.address !== '')).toBe(true);
    // Reads and public-key calls are not audited.
    expect(entries.some((e) => e.method === 'GET')).toBe(false);
    expect(entries.filter((e) => e.actor_kind === 'key')).toHaveLength(1);
  });

  it('filters by actor and project and pages with a cursor, newest first', async () => {
    const owner = as(ops.owner!.token);
    const byAdmin = await request(t.app).get('/v1/admin/audit').query({ actor: 'admin@ops.example' }).set(owner);
    expect(byAdmin.body.entries.length).toBeGreaterThan(0);
    expect(byAdmin.body.entries.every((e: { actor: string }) => e.actor === 'admin@ops.example')).toBe(true);
    const all: string[] = [];
    let cursor: string | null = null;
    do {
      const page: request.Response = await request(t.app).get('/v1/admin/audit').query({ limit: 3, ...(cursor ? { cursor } : {}) }).set(owner);
      expect(page.body.entries.length).toBeLessThanOrEqual(3);
      all.push(...page.body.entries.map((e: { id: string }) => e.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(all).toEqual([...all].sort().reverse());
    expect(new Set(all).size).toBe(all.length);
    const whole = await request(t.app).get('/v1/admin/audit').query({ limit: 200 }).set(owner);
    expect(all.length).toBeGreaterThanOrEqual(whole.body.entries.length);
    const byProject = await request(t.app).get('/v1/admin/audit').query({ project: t.project.id }).set(owner);
    expect(byProject.body.entries.every((e: { project: string }) => e.project === t.project.id)).toBe(true);
    const bad = await request(t.app).get('/v1/admin/audit').query({ limit: 5000, since: 'yesterday' }).set(owner);
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.details.fields).sort()).toEqual(['limit', 'since']);
  });

  it('prunes entries older than the retention, and keeps the rest', async () => {
    const store = t.standalone!.store.operators;
    const old = new Date(Date.now() - 91 * 86_400_000).toISOString();
    await store.appendAudit({ id: 'aud_00000000000000000000000000', at: old, actor_kind: 'bootstrap', actor_id: null, actor: 'bootstrap', project: null, method: 'POST', path: '/v1/admin/projects', status: 201, address: '127.0.0.1' });
    const listed = async () => (await request(t.app).get('/v1/admin/audit').query({ limit: 200 }).set(boot())).body.entries as Array<{ id: string }>;
    const before = await listed();
    expect(before.map((e) => e.id)).toContain('aud_00000000000000000000000000');
    expect(await t.standalone!.gateway.audit.prune()).toBe(1);
    const after = await listed();
    expect(after.map((e) => e.id)).not.toContain('aud_00000000000000000000000000');
    expect(after.length).toBe(before.length - 1);
  });

  it("a viewer cannot export users' password hashes or the providers' client secrets; an admin can, and the audit log says so", async () => {
    const pid = t.project.id;
    for (const path of ['/auth/portability/users', '/auth/portability/settings']) {
      const refused = await request(t.app).get(`/v1/projects/${pid}${path}`).set(as(ops.viewer!.token));
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ error: 'forbidden', details: { role: 'viewer', needed: 'admin' } });
      expect(JSON.stringify(refused.body)).not.toContain('$2');
      expect((await request(t.app).get(`/v1/projects/${pid}${path}`).set(as(ops.admin!.token))).status).toBe(200);
    }
    const entries = (await request(t.app).get('/v1/admin/audit').query({ limit: 200, project: pid }).set(boot())).body.entries as Array<{ actor: string; method: string; path: string; status: number }>;
    expect(entries).toContainEqual(expect.objectContaining({ actor: 'viewer@ops.example', method: 'GET', path: `/v1/projects/${pid}/auth/portability/users`, status: 403 }));
    expect(entries).toContainEqual(expect.objectContaining({ actor: 'admin@ops.example', method: 'GET', path: `/v1/projects/${pid}/auth/portability/settings`, status: 200 }));
  });
});

describe('operator session expiry', () => {
  let t: TestPlinth;
  beforeAll(async () => {
    t = await startTestPlinth({ env: { PLINTH_OPERATOR_SESSION_TTL_S: '1' } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a session not refreshed within its lifetime answers 401 on the operator API and on projects', async () => {
    await request(t.app).post('/v1/admin/operators').set('Authorization', `Bearer ${t.adminKey}`).send({ email: 'brief@ops.example', password: 'brief session password', role: 'admin' });
    const s = await request(t.app).post('/v1/admin/sessions').send({ email: 'brief@ops.example', password: 'brief session password' });
    expect(Date.parse(s.body.session.expires_at) - Date.parse(s.body.session.created_at)).toBe(1000);
    const auth = { Authorization: `Bearer ${s.body.token}` };
    let status = 200;
    for (let i = 0; i < 50 && status === 200; i++) {
      status = (await request(t.app).get('/v1/admin/me').set(auth)).status;
      if (status === 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(401);
    expect((await request(t.app).get(`/v1/projects/${t.project.id}/collections`).set(auth)).status).toBe(401);
  });

  it('answers 429 after 10 failed sign-ins for one e-mail, with Retry-After, even with the right password', async () => {
    await request(t.app).post('/v1/admin/operators').set('Authorization', `Bearer ${t.adminKey}`).send({ email: 'guessed@ops.example', password: 'the right password', role: 'viewer' });
    for (let i = 0; i < 10; i++) {
      expect((await request(t.app).post('/v1/admin/sessions').send({ email: 'guessed@ops.example', password: `wrong guess ${i}` })).status).toBe(401);
    }
    const limited = await request(t.app).post('/v1/admin/sessions').send({ email: 'guessed@ops.example', password: 'the right password' });
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe('rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });
});
