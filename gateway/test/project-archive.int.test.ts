/**
 * `plinth projects export` / `import` between two standalone deployments (in-process, each with
 * its own PLINTH_MFA_KEY): a user's TOTP factor moves — the secret re-sealed under the target's
 * key, so a code from the user's authenticator and a recovery code both complete the sign-in
 * there — and a disabled user stays disabled. What is refused, with one line and no project
 * created where nothing can be imported: a wrong passphrase, a missing passphrase, an archive
 * cut short, a project that exists. The endpoints underneath answer only their credential and
 * bound their input; a file's bytes are stored only for a record that names them, only when
 * they match its metadata, and never over a stored file.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { Secret, TOTP } from 'otpauth';
import { runCli } from '../../clients/cli/src/run';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';

const PASSPHRASE = 'archive refusals passphrase';
const PASSWORD = 'two factor password';

async function call<T = Record<string, unknown>>(base: string, method: string, p: string, key: string, body?: unknown, userToken?: string): Promise<{ status: number; body: T }> {
  const res = await fetch(`${base}${p}`, {
    method,
    headers: { ...(key ? { Authorization: `Bearer ${key}` } : {}), ...(userToken ? { 'X-Auth-User-Token': userToken } : {}), ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as T };
}

describe('moving a project: second factors, and what is refused', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-archive-'));
  const archive = path.join(root, 'p.plinth.jsonl.gz');
  let source: TestPlinth;
  let target: TestPlinth;
  let src: string;
  let dst: string;
  let project: string;
  let keys: { publicKey: string; secretKey: string };
  let totpSecret: string;
  let recovery: string[];
  const cli = async (base: string, adminKey: string, ...argv: string[]) => {
    let out = '';
    let err = '';
    const code = await runCli(argv, { env: { PLINTH_URL: base, PLINTH_ADMIN_KEY: adminKey }, out: { write: (s: string) => (out += s) }, err: { write: (s: string) => (err += s) } });
    return { code, out, err };
  };

  beforeAll(async () => {
    source = await startTestPlinth({ topology: 'standalone', env: { PLINTH_MFA_KEY: 'source-mfa-key-'.padEnd(40, 's') } });
    target = await startTestPlinth({ topology: 'standalone', env: { PLINTH_MFA_KEY: 'target-mfa-key-'.padEnd(40, 't') } });
    [src, dst] = [await source.url(), await target.url()];
    project = source.project.id;
    keys = source.project;
    const p = (rest: string) => `/v1/projects/${project}${rest}`;
    expect((await call(src, 'PATCH', p('/settings/auth'), keys.secretKey, { enabled: true, send_verification_on_signup: false })).status).toBe(200);
    const up = await call<{ access_token: string }>(src, 'POST', p('/auth/signup'), keys.publicKey, { email: 'two@example.com', password: PASSWORD });
    const enroll = await call<{ secret: string }>(src, 'POST', p('/auth/mfa/totp/enroll'), keys.publicKey, undefined, up.body.access_token);
    expect(enroll.status).toBe(200);
    totpSecret = enroll.body.secret;
    const code = TOTP.generate({ secret: Secret.fromBase32(totpSecret), timestamp: Date.now() });
    const confirm = await call<{ recovery_codes: string[] }>(src, 'POST', p('/auth/mfa/totp/confirm'), keys.publicKey, { code }, up.body.access_token);
    expect(confirm.status).toBe(200);
    recovery = confirm.body.recovery_codes;
    const off = await call<{ user: { id: string } }>(src, 'POST', p('/auth/users'), keys.secretKey, { email: 'off@example.com', password: PASSWORD });
    expect((await call(src, 'PATCH', p(`/auth/users/${off.body.user.id}`), keys.secretKey, { status: 'disabled' })).status).toBe(200);
    expect((await cli(src, source.adminKey, 'projects', 'export', project, '--out', archive, '--passphrase', PASSPHRASE)).code).toBe(0);
  }, 60_000);
  afterAll(async () => {
    await target?.close();
    await source?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('refuses a wrong or missing passphrase before creating anything', async () => {
    const wrong = await cli(dst, target.adminKey, 'projects', 'import', archive, '--passphrase', 'not the right passphrase');
    expect(wrong).toEqual({ code: 1, out: '', err: 'plinth: wrong passphrase for this archive\n' });
    const none = await cli(dst, target.adminKey, 'projects', 'import', archive);
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/^plinth: a project archive holds secrets: give a passphrase with --passphrase or PLINTH_ARCHIVE_PASSPHRASE/);
    expect((await call(dst, 'GET', `/v1/admin/projects/${project}`, target.adminKey)).status).toBe(404);
    expect((await cli(src, source.adminKey, 'projects', 'export', project, '--out', path.join(root, 'x.gz'))).code).toBe(2);
    expect(fs.existsSync(path.join(root, 'x.gz'))).toBe(false);
  });

  it('the second factor moves: a code from the same authenticator and a recovery code sign in on the target; a disabled user stays disabled', async () => {
    const imported = await cli(dst, target.adminKey, 'projects', 'import', archive, '--passphrase', PASSPHRASE);
    expect(imported).toMatchObject({ code: 0, err: '' });
    expect(JSON.parse(imported.out).counts).toEqual({ keys: 2, collections: 0, auth_settings: 1, records: 0, users: 2, files: 0, webhooks: 0 });
    const p = (rest: string) => `/v1/projects/${project}${rest}`;
    const signIn = () => call<{ details: { challenge: string } }>(dst, 'POST', p('/auth/signin'), keys.publicKey, { email: 'two@example.com', password: PASSWORD });
    const first = await signIn();
    expect(first.status).toBe(401);
    // The step after the one that confirmed the factor (codes of one step either side are accepted).
    const code = TOTP.generate({ secret: Secret.fromBase32(totpSecret), timestamp: Date.now() + 30_000 });
    const verified = await call<{ access_token: string }>(dst, 'POST', p('/auth/mfa/verify'), keys.publicKey, { challenge: first.body.details.challenge, code });
    expect(verified.status).toBe(200);
    expect(JSON.parse(Buffer.from(verified.body.access_token.split('.')[1]!, 'base64url').toString()).aal).toBe(2);
    const second = await signIn();
    expect((await call(dst, 'POST', p('/auth/mfa/verify'), keys.publicKey, { challenge: second.body.details.challenge, recovery_code: recovery[0] })).status).toBe(200);
    expect((await call(dst, 'POST', p('/auth/signin'), keys.publicKey, { email: 'off@example.com', password: PASSWORD })).status).toBe(401);
  });

  it('refuses an existing project, and an archive cut short', async () => {
    const again = await cli(dst, target.adminKey, 'projects', 'import', archive, '--passphrase', PASSPHRASE);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/^plinth: POST \/v1\/admin\/projects\/import → 409 conflict: .*\n$/);
    const lines = gunzipSync(fs.readFileSync(archive)).toString('utf8').trimEnd().split('\n');
    const header = JSON.parse(lines[0]!) as { project: string };
    const renamed = lines.map((l) => l.replaceAll(`"${header.project}"`, '"cut-short"')).slice(0, -1);
    const cut = path.join(root, 'cut.gz');
    fs.writeFileSync(cut, gzipSync(`${renamed.join('\n')}\n`));
    // Its keys are those of the project already imported: refused, naming that project.
    const sameKeys = await cli(dst, target.adminKey, 'projects', 'import', cut, '--passphrase', PASSPHRASE);
    expect(sameKeys.err).toMatch(new RegExp(`409 conflict: A key of this project \\((pk|sk)_.{5}…\\) is already a key of project ${project} on this deployment`));
    expect((await call(dst, 'GET', '/v1/admin/projects/cut-short', target.adminKey)).status).toBe(404);
    // Without its keys, the project is created, then the missing last line is found.
    const keyless = renamed.map((l, i) => (i === 1 ? JSON.stringify({ ...JSON.parse(l), keys: [] }) : l));
    fs.writeFileSync(cut, gzipSync(`${keyless.join('\n')}\n`));
    const short = await cli(dst, target.adminKey, 'projects', 'import', cut, '--passphrase', PASSPHRASE);
    expect(short.code).toBe(1);
    expect(short.err).toMatch(/ends before its "end" line: the archive is truncated .*delete project cut-short and import a whole archive/);
  });

  it('the endpoints underneath: only their credential, bounded input', async () => {
    const p = (rest: string) => `/v1/projects/${project}${rest}`;
    expect((await call(dst, 'GET', p('/auth/portability/users'), keys.publicKey)).status).toBe(403);
    expect((await call(dst, 'GET', p('/auth/portability/settings'), keys.publicKey)).status).toBe(403);
    expect((await call(dst, 'GET', `${p('/auth/portability/users')}?limit=501`, keys.secretKey)).status).toBe(400);
    const page = await call<{ users: Array<Record<string, unknown>>; total: number }>(dst, 'GET', p('/auth/portability/users'), keys.secretKey);
    expect(page.body.total).toBe(2);
    // The same users again change nothing; a password "hash" that is not bcrypt is refused.
    expect((await call(dst, 'POST', p('/auth/portability/users'), keys.secretKey, { users: page.body.users })).body).toEqual({ imported: 0, existing: 2 });
    const forged = { ...page.body.users[1]!, id: 'usr_0000000000000000000000zzzz', email: 'forged@example.com', password_hash: 'plain text' };
    const refused = await call<{ error: string; details: { field: string } }>(dst, 'POST', p('/auth/portability/users'), keys.secretKey, { users: [forged] });
    expect(refused).toMatchObject({ status: 400, body: { error: 'invalid_request', details: { field: 'users.0.password_hash' } } });
    expect((await call(dst, 'GET', `/v1/admin/projects/${project}/export`, keys.secretKey)).status).toBe(403);
    // A viewer operator reads projects, but does not take a copy of one (key hashes) nor bring one in.
    expect((await call(dst, 'POST', '/v1/admin/operators', target.adminKey, { email: 'viewer@ops.example', password: 'viewer password here', role: 'viewer' })).status).toBe(201);
    const session = await call<{ token: string }>(dst, 'POST', '/v1/admin/sessions', '', { email: 'viewer@ops.example', password: 'viewer password here' });
    expect((await call(dst, 'GET', `/v1/admin/projects/${project}`, session.body.token)).status).toBe(200);
    const viewerExport = await call(dst, 'GET', `/v1/admin/projects/${project}/export`, session.body.token);
    expect(viewerExport).toMatchObject({ status: 403, body: { error: 'forbidden', details: { role: 'viewer', needed: 'admin' } } });
    expect((await call(dst, 'POST', '/v1/admin/projects/import', session.body.token, { project: { id: 'by-viewer', name: 'x', created_at: '2026-01-01T00:00:00Z' }, keys: [] })).status).toBe(403);
    const tooMany = Array.from({ length: 101 }, (_, i) => ({ id: `key_${String(i).padStart(26, '0')}`, kind: 'public', hash: i.toString(16).padStart(64, '0'), prefix: 'pk_abcde', created_at: '2026-01-01T00:00:00Z' }));
    const bounded = await call(dst, 'POST', '/v1/admin/projects/import', target.adminKey, { project: { id: 'many-keys', name: 'x', created_at: '2026-01-01T00:00:00Z' }, keys: tooMany });
    expect(bounded.status).toBe(400);
  });
  it('files and webhooks: operators only; bytes only for a record naming them, matching it, never over a stored file', async () => {
    const p = (rest: string) => `/v1/projects/${project}${rest}`;
    const put = (key: string, rest: string, bytes: Buffer) =>
      fetch(`${dst}${p(rest)}`, { method: 'PUT', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/octet-stream' }, body: bytes }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));
    expect((await call(dst, 'POST', p('/collections'), keys.secretKey, { name: 'docs', fields: { doc: { type: 'file' } } })).status).toBe(201);
    const bytes = Buffer.from('the bytes of the document\n');
    const meta = { name: 'report_k3v9x2m4pq.txt', original_name: 'report.txt', size: bytes.length, type: 'text/plain', sha256: createHash('sha256').update(bytes).digest('hex'), created_at: '2026-01-01T00:00:00.000Z' };
    const record = { id: 'rec_06h1e9452pzr79t7aqgv98jr3g', version: 1, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', doc: meta };
    // Metadata in another shape than an export's is refused.
    const odd = await call(dst, 'POST', p('/collections/docs/records:import'), keys.secretKey, { records: [{ ...record, doc: { ...meta, path: '../x' } }] });
    expect(odd).toMatchObject({ status: 400, body: { error: 'invalid_request', details: { field: 'doc' } } });
    expect((await call(dst, 'POST', p('/collections/docs/records:import'), keys.secretKey, { records: [record] })).body).toEqual({ imported: 1, existing: 0 });
    const file = `/files/docs/${record.id}/${meta.name}`;
    // Not the project's secret key, not a viewer; other bytes of the same length are not stored.
    expect((await put(keys.secretKey, file, bytes)).status).toBe(403);
    const session = await call<{ token: string }>(dst, 'POST', '/v1/admin/sessions', '', { email: 'viewer@ops.example', password: 'viewer password here' });
    expect((await put(session.body.token, file, bytes)).status).toBe(403);
    const forged = Buffer.from('THE BYTES OF THE DOCUMENT\n');
    expect(await put(target.adminKey, file, forged)).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    expect((await put(target.adminKey, file, Buffer.concat([bytes, bytes]))).status).toBe(400);
    expect((await put(target.adminKey, `/files/docs/${record.id}/other_k3v9x2m4pq.txt`, bytes)).status).toBe(404);
    expect((await call(dst, 'GET', p(file), keys.secretKey)).status).toBe(404);
    expect(await put(target.adminKey, file, bytes)).toMatchObject({ status: 201, body: { file: { name: meta.name, size: bytes.length, sha256: meta.sha256 } } });
    const got = await fetch(`${dst}${p(file)}`, { headers: { Authorization: `Bearer ${keys.secretKey}` } });
    expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
    // Stored once: not replaced, and another record cannot be pointed at it.
    expect((await put(target.adminKey, file, bytes)).status).toBe(409);
    const twin = { ...record, id: 'rec_06h1e9452pzr79t7aqgv98jr3h' };
    expect((await call(dst, 'POST', p('/collections/docs/records:import'), keys.secretKey, { records: [twin] })).status).toBe(409);

    // Webhooks with their secrets: operators only (and POST, so a viewer is refused at the gateway); bounded.
    expect((await call(dst, 'POST', p('/webhooks/portability/export'), keys.secretKey)).status).toBe(403);
    expect((await call(dst, 'POST', p('/webhooks/portability/export'), session.body.token)).status).toBe(403);
    expect((await call(dst, 'POST', p('/webhooks/portability/export'), target.adminKey)).body).toEqual({ webhooks: [] });
    const hook = (i: number) => ({ id: `wh_06h1e9452pzr79t7aqgv98j${String(i).padStart(3, '0')}`, url: `https://hooks.example.com/${i}`, events: ['record.created'], collections: null, enabled: true, disabled_reason: null, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', secret: `whsec_${Buffer.alloc(32, i).toString('base64')}` });
    expect((await call(dst, 'POST', p('/webhooks/portability/import'), keys.secretKey, { webhooks: [hook(1)] })).status).toBe(403);
    expect((await call(dst, 'POST', p('/webhooks/portability/import'), target.adminKey, { webhooks: Array.from({ length: 21 }, (_, i) => hook(i)) })).status).toBe(400);
    expect((await call(dst, 'POST', p('/webhooks/portability/import'), target.adminKey, { webhooks: [{ ...hook(1), secret: 'not a secret' }] })).status).toBe(400);
    expect((await call(dst, 'POST', p('/webhooks/portability/import'), target.adminKey, { webhooks: [hook(1)] })).body).toEqual({ imported: 1, existing: 0 });
    expect((await call(dst, 'POST', p('/webhooks/portability/import'), target.adminKey, { webhooks: [hook(1)] })).body).toEqual({ imported: 0, existing: 1 });
    expect((await call(dst, 'POST', p('/webhooks/portability/export'), target.adminKey)).body).toEqual({ webhooks: [hook(1)] });
  });
});
