/**
 * Moving a project from standalone to the cluster topology with `plinth projects export` and
 * `plinth projects import` (the CLI in-process, over real HTTP to both deployments): a standalone
 * project with PLINTH_TEST_PORTABILITY_RECORDS records (100 000 by default; seeded through the
 * bulk `records:import` path) in a collection and a few in one that points at it by relation,
 * PLINTH_TEST_PORTABILITY_USERS users (1 000; bcrypt cost 4), Auth settings with a provider's
 * client secret, records holding stored files (a multi-MB one, images of a field with thumbnails,
 * a list of files) and a webhook with a receiver is exported to one archive and imported into a
 * cluster (SQLite storage, two replicas of records and auth, a realtime replica). There: the
 * project's own keys work, every record reads back identical (counts and a checksum over the full
 * listing of each collection), every user is there and signs in with the same password, the
 * settings and the secret came along, every file downloads byte-identical and its thumbnail is
 * made, a change is delivered to the receiver signed with the secret shown when the webhook was
 * made on the source, and a realtime subscriber gets the change events of the imported project.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { Webhook } from 'standardwebhooks';
import { newId } from '@plinth/shared';
import { runCli } from '../../clients/cli/src/run';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { startWebhookReceiver, type WebhookReceiver } from '@plinth/testing/webhook-receiver';
import { RtClient } from '../../services/realtime/test/support/rt-client';

const RECORDS = Number(process.env.PLINTH_TEST_PORTABILITY_RECORDS ?? 100_000);
const USERS = Number(process.env.PLINTH_TEST_PORTABILITY_USERS ?? 1_000);
const PASSPHRASE = 'portability test passphrase';
/**
 * Cheap hashes, no rate limits; and hashes may wait their turn long on a machine busy with other
 * work (the default refuses, 503 `overloaded`, a hash predicted to wait more than half a second).
 */
const FAST_AUTH = { PLINTH_BCRYPT_COST: '4', PLINTH_RATE_LIMIT_IP: '100000', PLINTH_RATE_LIMIT_EMAIL: '100000', PLINTH_HASH_MAX_WAIT_MS: '30000' };
/** The receiver listens on 127.0.0.2, which webhooks may reach only when allowed. */
const ENV = { ...FAST_AUTH, PLINTH_WEBHOOK_ALLOW_HOSTS: '127.0.0.2', PLINTH_WEBHOOK_DISPATCH_MS: '50' };
/** The multi-MB file: more than a few chunks of the archive, well past a request body's 1 MiB. */
const BIG_FILE_BYTES = 6 * 1024 * 1024 + 12_345;

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

interface UploadedFile {
  record: string;
  field: string;
  name: string;
  bytes: Buffer;
  type: string;
}

/** A multipart record create with `files` ([field, bytes, file name]); the files as stored. */
async function createWithFiles(base: string, project: string, key: string, data: object, files: Array<[string, Buffer, string]>): Promise<UploadedFile[]> {
  const boundary = `----plinth${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="data"\r\n\r\n${JSON.stringify(data)}\r\n`)];
  for (const [field, bytes, name] of files) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`), bytes, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  const res = await fetch(`${base}/v1/projects/${project}/collections/docs/records`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': `multipart/form-data; boundary=${boundary}` },
    body: Buffer.concat(parts),
  });
  const body = (await res.json()) as { record: { [k: string]: unknown } };
  expect(res.status).toBe(201);
  const record = body.record;
  const out: UploadedFile[] = [];
  const used = new Set<string>();
  for (const [field, bytes] of files) {
    const held = record[field];
    const metas = (Array.isArray(held) ? held : [held]) as Array<{ name: string; size: number; type: string }>;
    const meta = metas.find((m) => m.size === bytes.length && !used.has(m.name))!;
    used.add(meta.name);
    out.push({ record: String(record.id), field, name: meta.name, bytes, type: meta.type });
  }
  return out;
}

async function downloadFile(base: string, project: string, key: string, f: { record: string; name: string }, query = ''): Promise<{ status: number; type: string | null; bytes: Buffer }> {
  const res = await fetch(`${base}/v1/projects/${project}/files/docs/${f.record}/${f.name}${query}`, { headers: { Authorization: `Bearer ${key}` } });
  return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
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
  let files: UploadedFile[] = [];
  let receiver: WebhookReceiver;
  let webhook: { id: string; secret: string };
  const COLLECTIONS = ['notes', 'comments', 'docs'];

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    source = await startTestPlinth({ topology: 'standalone', env: ENV });
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
      expect(made.filter((m) => m.status !== 201)).toEqual([]);
    }
    // Records holding stored files: a multi-MB one, images of a field with thumbnails, a list of several.
    const docs = { title: { type: 'text' }, attachment: { type: 'file', max_size: 16 * 1024 * 1024 }, gallery: { type: 'files', mime_types: ['image/*'], thumbs: ['100x100', '0x50'], max_items: 5 } };
    expect((await call(sourceUrl, 'POST', p('/collections'), keys.secretKey, { name: 'docs', fields: docs, rules: { read: 'auth != null' } })).status).toBe(201);
    const image = (w: number, h: number, background: string) => sharp({ create: { width: w, height: h, channels: 3, background } }).png().toBuffer();
    const made = [
      await createWithFiles(sourceUrl, project, keys.secretKey, { title: 'big' }, [['attachment', randomBytes(BIG_FILE_BYTES), 'dump.bin']]),
      await createWithFiles(sourceUrl, project, keys.secretKey, { title: 'photo' }, [['gallery', await image(640, 480, '#3a6'), 'Beach 2026.PNG']]),
      await createWithFiles(sourceUrl, project, keys.secretKey, { title: 'album' }, [
        ['gallery', await image(300, 200, '#a63'), 'one.png'],
        ['gallery', await image(200, 300, '#36a'), 'two.png'],
      ]),
      await createWithFiles(sourceUrl, project, keys.secretKey, { title: 'note' }, [['attachment', Buffer.from('plain text, moved as it is — é\n'), 'readme.txt']]),
    ];
    files = made.flat();
    expect(files.map((f) => f.type)).toEqual(['application/octet-stream', 'image/png', 'image/png', 'image/png', 'text/plain']);
    // A webhook of the project, made after the seeding: its secret is shown once, here.
    const hook = await call<{ webhook: { id: string; secret: string } }>(sourceUrl, 'POST', p('/webhooks'), keys.secretKey, { url: receiver.url, events: ['record.created'], collections: ['docs'] });
    expect(hook.status).toBe(201);
    webhook = hook.body.webhook;
    for (const c of COLLECTIONS) digests[c] = await digest(sourceUrl, project, keys.secretKey, c);
    expect(digests.notes!.count).toBe(RECORDS);
  }, 600_000);

  afterAll(async () => {
    await target?.close();
    await source?.close();
    await receiver?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('exports the whole project to one archive, then imports it into a cluster', async () => {
    const exported = await cli({ PLINTH_URL: sourceUrl, PLINTH_ADMIN_KEY: source.adminKey, PLINTH_ARCHIVE_PASSPHRASE: PASSPHRASE }, 'projects', 'export', project, '--out', archive);
    expect(exported).toMatchObject({ code: 0, err: '' });
    const counts = { keys: 2, collections: 3, auth_settings: 1, records: RECORDS + noteIds.length + 4, users: USERS, files: files.length, webhooks: 1 };
    expect(JSON.parse(exported.out)).toEqual({ archive, project, counts });
    // No secret in the archive in the clear: the client secret, the webhook's signing secret and the keys are not there.
    const text = require('node:zlib').gunzipSync(fs.readFileSync(archive)).toString('utf8') as string;
    for (const secret of ['gh-secret-value', webhook.secret, webhook.secret.slice('whsec_'.length), keys.secretKey, keys.publicKey, password(0)]) expect(text).not.toContain(secret);
    expect(text).toMatch(/"password_hash":"\$2[aby]\$04\$/);

    target = await startTestPlinth({ topology: 'cluster', realtimeReplicas: 1, env: ENV });
    targetUrl = await target.url();
    const imported = await cli({ PLINTH_URL: targetUrl, PLINTH_ADMIN_KEY: target.adminKey }, 'projects', 'import', archive, '--passphrase', PASSPHRASE);
    expect(imported).toMatchObject({ code: 0, err: '' });
    expect(JSON.parse(imported.out).counts).toEqual(counts);
  }, 600_000);

  it("on the cluster: the project's own keys work, every record reads back identical", async () => {
    for (const c of COLLECTIONS) expect(await digest(targetUrl, project, keys.secretKey, c)).toEqual(digests[c]);
    const collection = await call<{ collection: { fields: unknown; rules: unknown } }>(targetUrl, 'GET', `/v1/projects/${project}/collections/comments`, keys.publicKey);
    expect(collection.body.collection).toMatchObject({ fields: { note: { type: 'relation', collection: 'notes' } }, rules: { read: 'true' } });
  }, 300_000);

  it('every user is there and signs in with the same password; the settings and the provider secret came along', async () => {
    const listed = await call<{ total: number }>(targetUrl, 'GET', `/v1/projects/${project}/auth/users?limit=1`, keys.secretKey);
    expect(listed.body.total).toBe(USERS);
    for (let start = 0; start < USERS; start += 50) {
      const batch = Array.from({ length: Math.min(50, USERS - start) }, (_, j) => start + j);
      const signIns = await Promise.all(
        batch.map((i) => call<{ user: { email: string; display_name: string } }>(targetUrl, 'POST', `/v1/projects/${project}/auth/signin`, keys.publicKey, { email: email(i), password: password(i) })),
      );
      expect(signIns.map((r) => [r.status, r.body.user?.email, r.body.user?.display_name])).toEqual(batch.map((i) => [200, email(i), `Mover ${i}`]));
    }
    expect((await call(targetUrl, 'POST', `/v1/projects/${project}/auth/signin`, keys.publicKey, { email: email(0), password: password(1) })).status).toBe(401);
    const settings = await call<Record<string, unknown>>(targetUrl, 'GET', `/v1/projects/${project}/settings/auth`, keys.secretKey);
    expect(settings.body).toMatchObject({ enabled: true, access_token_ttl: 1800, mail_from: 'movers@example.com', providers: { github: { client_id: 'gh-client', client_secret_set: true } } });
  }, 120_000);

  it('every stored file downloads byte-identical from the cluster, and its thumbnails are made there', async () => {
    for (const f of files) {
      const got = await downloadFile(targetUrl, project, keys.secretKey, f);
      expect({ status: got.status, type: got.type?.split(';')[0], size: got.bytes.length }).toEqual({ status: 200, type: f.type, size: f.bytes.length });
      expect(got.bytes.equals(f.bytes)).toBe(true);
    }
    const photo = files.find((f) => f.field === 'gallery')!;
    for (const [thumb, size] of [['100x100', { width: 100, height: 100 }], ['0x50', { width: 67, height: 50 }]] as const) {
      const got = await downloadFile(targetUrl, project, keys.secretKey, photo, `?thumb=${thumb}`);
      expect(got.status).toBe(200);
      expect(await sharp(got.bytes).metadata()).toMatchObject({ format: 'png', ...size });
    }
  }, 120_000);

  it('the webhook moved with its secret: a change on the cluster is delivered and verifies with the secret shown on the source', async () => {
    const listed = await call<{ webhooks: Array<Record<string, unknown>> }>(targetUrl, 'GET', `/v1/projects/${project}/webhooks`, keys.secretKey);
    expect(listed.body.webhooks).toEqual([expect.objectContaining({ id: webhook.id, url: receiver.url, events: ['record.created'], collections: ['docs'], enabled: true })]);
    const made = await call<{ record: { id: string } }>(targetUrl, 'POST', `/v1/projects/${project}/collections/docs/records`, keys.secretKey, { data: { title: 'made on the cluster' } });
    expect(made.status).toBe(201);
    const mine = (r: { body: string }) => r.body.includes(made.body.record.id);
    await receiver.until((got) => got.some(mine), 30_000);
    const delivery = receiver.received.find(mine)!;
    const payload = new Webhook(webhook.secret).verify(delivery.body, delivery.headers) as { type: string; data: { record: { id: string; title: string } } };
    expect(payload).toMatchObject({ type: 'record.created', data: { record: { id: made.body.record.id, title: 'made on the cluster' } } });
  }, 60_000);

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
