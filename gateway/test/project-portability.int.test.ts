/**
 * Moving a project from standalone to the cluster topology with `plinth projects export` and
 * `plinth projects import` (the CLI in-process, over real HTTP to both deployments): a standalone
 * project with PLINTH_TEST_PORTABILITY_RECORDS records (100 000 by default; seeded through the
 * bulk `records:import` path) in a collection and a few in one that points at it by relation,
 * PLINTH_TEST_PORTABILITY_USERS users (1 000; bcrypt cost 4) and Auth settings with a provider's
 * client secret is exported to one archive and imported into a cluster (SQLite storage, two
 * replicas of records and auth, a realtime replica). There: the project's own keys work, every
 * record reads back identical (counts and a checksum over the full listing of each collection),
 * every user is there and a sample signs in with the same password, the settings and the secret
 * came along, and a realtime subscriber gets the change events of the imported project.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { newId } from '@plinth/shared';
import { runCli } from '../src/cli/run';
import { startTestPlinth, type TestPlinth } from '../src/testing/harness';
import { RtClient } from '../../services/realtime/test/support/rt-client';

const RECORDS = Number(process.env.PLINTH_TEST_PORTABILITY_RECORDS ?? 100_000);
const USERS = Number(process.env.PLINTH_TEST_PORTABILITY_USERS ?? 1_000);
const PASSPHRASE = 'portability test passphrase';
const FAST_AUTH = { PLINTH_BCRYPT_COST: '4', PLINTH_RATE_LIMIT_IP: '100000', PLINTH_RATE_LIMIT_EMAIL: '100000' };

const password = (i: number) => `password number ${i}`;
const email = (i: number) => `mover-${i}@example.com`;

async function call<T = Record<string, unknown>>(base: string, method: string, p: string, key: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${base}${p}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as T };
}

async function cli(env: Record<string, string>, ...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(argv, { env, out: { write: (s: string) => (out += s) }, err: { write: (s: string) => (err += s) } });
  return { code, out, err };
}

/** Count and SHA-256 of a collection's full listing by id, one JSON line per record. */
async function digest(base: string, project: string, key: string, collection: string): Promise<{ count: number; sha256: string }> {
  const hash = createHash('sha256');
  let count = 0;
  let cursor: string | null = null;
  do {
    const q = new URLSearchParams({ orderBy: 'id', limit: '1000', ...(cursor ? { cursor } : {}) });
    const page: { status: number; body: { records: unknown[]; cursor: string | null } } = await call(base, 'GET', `/v1/projects/${project}/collections/${collection}/records?${q}`, key);
    expect(page.status).toBe(200);
    for (const r of page.body.records) hash.update(`${JSON.stringify(r)}\n`);
    count += page.body.records.length;
    cursor = page.body.cursor;
  } while (cursor);
  return { count, sha256: hash.digest('hex') };
}

describe('a standalone project moved to the cluster', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-portability-'));
  const archive = path.join(root, 'project.plinth.jsonl.gz');
  let source: TestPlinth;
  let target: TestPlinth | undefined;
  let sourceUrl: string;
  let targetUrl: string;
  let project: string;
  let keys: { publicKey: string; secretKey: string };
  const digests: Record<string, { count: number; sha256: string }> = {};
  let noteIds: string[] = [];

  beforeAll(async () => {
    source = await startTestPlinth({ topology: 'standalone', env: FAST_AUTH });
    sourceUrl = await source.url();
    project = source.project.id;
    keys = source.project;
    const p = (rest: string) => `/v1/projects/${project}${rest}`;
    expect((await call(sourceUrl, 'POST', p('/collections'), keys.secretKey, { name: 'notes', fields: { title: { type: 'text', required: true }, n: { type: 'integer', indexed: true }, tags: { type: 'list' } }, rules: { read: 'auth != null' } })).status).toBe(201);
    expect((await call(sourceUrl, 'POST', p('/collections'), keys.secretKey, { name: 'comments', fields: { note: { type: 'relation', collection: 'notes' }, body: { type: 'text' } }, rules: { read: 'true' } })).status).toBe(201);
    const at = Date.parse('2026-01-01T00:00:00.000Z');
    for (let start = 0; start < RECORDS; start += 1000) {
      const records = Array.from({ length: Math.min(1000, RECORDS - start) }, (_, j) => {
        const i = start + j;
        const ts = new Date(at + i * 1000).toISOString();
        return { id: newId('rec_', at + i * 1000), version: 1 + (i % 3), created_at: ts, updated_at: ts, title: `note ${i} — é`, n: i, tags: [`t${i % 10}`, i % 2 === 0] };
      });
      if (start === 0) noteIds = records.slice(0, 50).map((r) => r.id);
      expect((await call(sourceUrl, 'POST', p('/collections/notes/records:import'), keys.secretKey, { records })).body).toEqual({ imported: records.length, existing: 0 });
    }
    for (const [i, note] of noteIds.entries()) expect((await call(sourceUrl, 'POST', p('/collections/comments/records'), keys.secretKey, { data: { note, body: `comment ${i}` } })).status).toBe(201);
    const settings = { enabled: true, access_token_ttl: 1800, mail_from: 'movers@example.com', providers: { github: { client_id: 'gh-client', client_secret: 'gh-secret-value' } } };
    expect((await call(sourceUrl, 'PATCH', p('/settings/auth'), keys.secretKey, settings)).status).toBe(200);
    for (let start = 0; start < USERS; start += 20) {
      const made = await Promise.all(
        Array.from({ length: Math.min(20, USERS - start) }, (_, j) => call(sourceUrl, 'POST', p('/auth/users'), keys.secretKey, { email: email(start + j), password: password(start + j), display_name: `Mover ${start + j}` })),
      );
      expect(made.map((m) => m.status)).toEqual(made.map(() => 201));
    }
    for (const c of ['notes', 'comments']) digests[c] = await digest(sourceUrl, project, keys.secretKey, c);
    expect(digests.notes!.count).toBe(RECORDS);
  }, 600_000);

  afterAll(async () => {
    await target?.close();
    await source?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('exports the whole project to one archive, then imports it into a cluster', async () => {
    const exported = await cli({ PLINTH_URL: sourceUrl, PLINTH_ADMIN_KEY: source.adminKey, PLINTH_ARCHIVE_PASSPHRASE: PASSPHRASE }, 'projects', 'export', project, '--out', archive);
    expect(exported).toMatchObject({ code: 0, err: '' });
    expect(JSON.parse(exported.out)).toEqual({ archive, project, counts: { keys: 2, collections: 2, auth_settings: 1, records: RECORDS + noteIds.length, users: USERS } });
    // No secret in the archive in the clear: the client secret and the keys are not there.
    const text = require('node:zlib').gunzipSync(fs.readFileSync(archive)).toString('utf8') as string;
    for (const secret of ['gh-secret-value', keys.secretKey, keys.publicKey, password(0)]) expect(text).not.toContain(secret);
    expect(text).toMatch(/"password_hash":"\$2[aby]\$04\$/);

    target = await startTestPlinth({ topology: 'cluster', realtimeReplicas: 1, env: FAST_AUTH });
    targetUrl = await target.url();
    const imported = await cli({ PLINTH_URL: targetUrl, PLINTH_ADMIN_KEY: target.adminKey }, 'projects', 'import', archive, '--passphrase', PASSPHRASE);
    expect(imported).toMatchObject({ code: 0, err: '' });
    expect(JSON.parse(imported.out).counts).toEqual({ keys: 2, collections: 2, auth_settings: 1, records: RECORDS + noteIds.length, users: USERS });
  }, 600_000);

  it("on the cluster: the project's own keys work, every record reads back identical", async () => {
    for (const c of ['notes', 'comments']) expect(await digest(targetUrl, project, keys.secretKey, c)).toEqual(digests[c]);
    const collection = await call<{ collection: { fields: unknown; rules: unknown } }>(targetUrl, 'GET', `/v1/projects/${project}/collections/comments`, keys.publicKey);
    expect(collection.body.collection).toMatchObject({ fields: { note: { type: 'relation', collection: 'notes' } }, rules: { read: 'true' } });
  }, 300_000);

  it('every user is there and signs in with the same password; the settings and the provider secret came along', async () => {
    const listed = await call<{ total: number }>(targetUrl, 'GET', `/v1/projects/${project}/auth/users?limit=1`, keys.secretKey);
    expect(listed.body.total).toBe(USERS);
    const sample = Array.from({ length: Math.min(20, USERS) }, (_, k) => Math.floor((k * USERS) / Math.min(20, USERS)));
    for (const i of sample) {
      const signIn = await call<{ user: { email: string; display_name: string } }>(targetUrl, 'POST', `/v1/projects/${project}/auth/signin`, keys.publicKey, { email: email(i), password: password(i) });
      expect(signIn.status).toBe(200);
      expect(signIn.body.user).toMatchObject({ email: email(i), display_name: `Mover ${i}` });
    }
    expect((await call(targetUrl, 'POST', `/v1/projects/${project}/auth/signin`, keys.publicKey, { email: email(0), password: password(1) })).status).toBe(401);
    const settings = await call<Record<string, unknown>>(targetUrl, 'GET', `/v1/projects/${project}/settings/auth`, keys.secretKey);
    expect(settings.body).toMatchObject({ enabled: true, access_token_ttl: 1800, mail_from: 'movers@example.com', providers: { github: { client_id: 'gh-client', client_secret_set: true } } });
  }, 120_000);

  it('realtime works on the imported project: a subscriber gets the create', async () => {
    const session = await call<{ access_token: string }>(targetUrl, 'POST', `/v1/projects/${project}/auth/signin`, keys.publicKey, { email: email(1), password: password(1) });
    const client = await RtClient.connect(targetUrl, project, { queryKey: keys.publicKey });
    try {
      client.send({ type: 'auth', token: session.body.access_token });
      await client.next((m) => m.type === 'auth_ok');
      expect(await client.subscribe('s', { collection: 'notes', where: [['n', '==', -1]] })).toMatchObject({ type: 'subscribed' });
      const made = await call<{ record: { id: string } }>(targetUrl, 'POST', `/v1/projects/${project}/collections/notes/records`, keys.secretKey, { data: { title: 'after the move', n: -1 } });
      expect(made.status).toBe(201);
      const events = await client.waitForEvents('s', 1);
      expect(events.map((e) => `${e.kind}:${e.record.id}`)).toEqual([`create:${made.body.record.id}`]);
    } finally {
      client.close();
    }
  }, 60_000);
});
