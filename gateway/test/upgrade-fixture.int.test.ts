/**
 * Upgrades: a data directory written by the previous release (test/fixtures/release-0.1.0, made
 * once by its make-fixture.js, before data versions existed) starts under this release — two
 * worker processes opening it together — and everything reads back: keys, the collection with
 * its fields and rules, every record, the Auth settings, every user's password. Each component's
 * data version is stored once migrated (auth's first migration applied). What that release did not
 * have — webhooks.db, the operator tables — is created from nothing at its data version, and
 * works. A data directory whose operators' TOTP secrets are stored in clear (as releases before
 * sealing wrote them) is sealed in place, and its enrolled operators sign in with their codes,
 * also after a restart. A data directory with a newer data version than this release knows — in
 * any of its stores — refuses to start with one line and exit code 1.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import bcrypt from 'bcrypt';
import Database from 'better-sqlite3';
import { newOperatorTotpSecret, operatorTotpCode } from '../src/operators/totp';
import { startStandalone, stopStandalone, type StandaloneProcess } from '@plinth/testing/standalone-process';

const FIXTURE = path.resolve(__dirname, '../../test/fixtures/release-0.1.0');

interface Expected {
  release: string;
  operator_key: string;
  keys: { public: string; secret: string };
  collection: unknown;
  records: Array<Record<string, unknown>>;
  users: Array<{ email: string; password: string; display_name?: string }>;
  settings: unknown;
}
const expected = JSON.parse(fs.readFileSync(path.join(FIXTURE, 'expected.json'), 'utf8')) as Expected;

function copyOfFixture(root: string, name: string): string {
  const dir = path.join(root, name);
  fs.cpSync(path.join(FIXTURE, 'data-dir'), dir, { recursive: true });
  fs.chmodSync(dir, 0o700);
  return dir;
}

function versions(file: string): Array<{ component: string; version: number; release: string }> {
  const db = new Database(file, { readonly: true });
  try {
    const has = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'plinth_data_version'").get();
    return has ? (db.prepare('SELECT component, version, release FROM plinth_data_version ORDER BY component').all() as Array<{ component: string; version: number; release: string }>) : [];
  } finally {
    db.close();
  }
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
}
async function callAt(base: string, method: string, p: string, key: string | null, body?: unknown): Promise<Answer> {
  const res = await fetch(`${base}${p}`, {
    method,
    headers: { ...(key ? { Authorization: `Bearer ${key}` } : {}), ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The TOTP columns of every operator, read from the file itself. */
function totpColumns(gatewayDb: string): Array<{ email: string; totp_secret: string | null; totp_pending: string | null }> {
  const db = new Database(gatewayDb, { readonly: true });
  try {
    return db.prepare('SELECT email, totp_secret, totp_pending FROM operators ORDER BY email').all() as Array<{ email: string; totp_secret: string | null; totp_pending: string | null }>;
  } finally {
    db.close();
  }
}

describe('a data directory of the previous release', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-upgrade-'));
  let s: StandaloneProcess;
  const call = async (method: string, p: string, key: string, body?: unknown) => {
    const res = await fetch(`${s.url}${p}`, {
      method,
      headers: { Authorization: `Bearer ${key}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const demo = (p: string) => `/v1/projects/demo${p}`;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = copyOfFixture(root, 'upgraded');
    // Written before data versions: no database carries one yet.
    for (const f of ['auth.db', 'records.db', 'gateway.db']) expect(versions(path.join(dataDir, f))).toEqual([]);
    // …and it had neither webhooks nor named operators.
    expect(fs.existsSync(path.join(dataDir, 'webhooks.db'))).toBe(false);
    expect(new Database(path.join(dataDir, 'gateway.db'), { readonly: true }).prepare("SELECT name FROM sqlite_master WHERE name = 'operators'").get()).toBeUndefined();
    s = await startStandalone(dataDir, { PLINTH_WORKERS: '2' });
  }, 60_000);
  afterAll(async () => {
    if (s) await stopStandalone(s);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('the operator key and the demo keys work as before', async () => {
    expect([s.operatorKey, s.publicKey, s.secretKey]).toEqual([expected.operator_key, expected.keys.public, expected.keys.secret]);
    const projects = await call('GET', '/v1/admin/projects', expected.operator_key);
    expect(projects.status).toBe(200);
    expect(JSON.stringify(projects.body)).toContain('"demo"');
  });

  it('the collection (fields, rules) and every record read back identical', async () => {
    expect((await call('GET', demo('/collections/notes'), expected.keys.secret)).body).toEqual({ collection: expected.collection });
    const records: unknown[] = [];
    for (let cursor: string | undefined; ; ) {
      const page = await call('GET', demo(`/collections/notes/records?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`), expected.keys.secret);
      expect(page.status).toBe(200);
      records.push(...(page.body.records as unknown[]));
      cursor = page.body.next_cursor as string | undefined;
      if (!cursor) break;
    }
    expect(records).toEqual(expected.records);
    // The read rule still applies: the public key alone reads nothing.
    expect((await call('GET', demo('/collections/notes/records'), expected.keys.public)).status).toBe(403);
  });

  it('the Auth settings are as before, and every user signs in with their password', async () => {
    expect((await call('GET', demo('/settings/auth'), expected.keys.secret)).body).toEqual(expected.settings);
    for (const u of expected.users) {
      const ok = await call('POST', demo('/auth/signin'), expected.keys.public, { email: u.email, password: u.password });
      expect(ok.status).toBe(200);
      expect(ok.body.user).toMatchObject({ email: u.email, display_name: u.display_name ?? null, has_password: true });
      expect((await call('POST', demo('/auth/signin'), expected.keys.public, { email: u.email, password: `${u.password}!` })).status).toBe(401);
    }
    // New sign-ups work on the upgraded tables.
    expect((await call('POST', demo('/auth/signup'), expected.keys.public, { email: 'new@example.com', password: 'a new passphrase' })).status).toBe(201);
  });

  it('each database now carries its data version, stamped once by this release', async () => {
    const created = await call('POST', demo('/collections/notes/records'), expected.keys.secret, { data: { title: 'after the upgrade', rank: 1 } });
    expect(created.status).toBe(201);
    expect(versions(path.join(dataDir, 'auth.db'))).toEqual([{ component: 'auth', version: 1, release: '0.1.0' }]);
    expect(versions(path.join(dataDir, 'records.db'))).toEqual([{ component: 'records', version: 0, release: '0.1.0' }]);
    expect(versions(path.join(dataDir, 'gateway.db'))).toEqual([
      { component: 'gateway', version: 0, release: '0.1.0' },
      { component: 'operators', version: 1, release: '0.1.0' },
    ]);
    expect(versions(path.join(dataDir, 'webhooks.db'))).toEqual([
      { component: 'webhook-queue', version: 0, release: '0.1.0' },
      { component: 'webhooks', version: 2, release: '0.1.0' },
    ]);
    expect(versions(path.join(dataDir, 'mailer.db'))).toContainEqual({ component: 'mail-queue', version: 0, release: '0.1.0' });
  });

  it('webhooks and named operators, which that release did not have, work on the tables made from nothing', async () => {
    const hook = await call('POST', demo('/webhooks'), expected.keys.secret, { url: 'https://hooks.example.com/plinth', events: ['record.created'] });
    expect(hook.status).toBe(201);
    expect((await call('GET', demo('/webhooks'), expected.keys.secret)).body.webhooks).toEqual([expect.objectContaining({ url: 'https://hooks.example.com/plinth' })]);
    const password = 'upgraded operator password';
    expect((await call('POST', '/v1/admin/operators', expected.operator_key, { email: 'ops@upgrade.example', password, role: 'viewer' })).status).toBe(201);
    const signedIn = await callAt(s.url, 'POST', '/v1/admin/sessions', null, { email: 'ops@upgrade.example', password });
    expect(signedIn.status).toBe(201);
    const enrol = await call('POST', '/v1/admin/me/totp', signedIn.body.token as string);
    expect(enrol.status).toBe(201);
    const secret = enrol.body.secret as string;
    expect((await call('POST', '/v1/admin/me/totp/confirm', signedIn.body.token as string, { code: operatorTotpCode(secret) })).status).toBe(200);
    const [row] = totpColumns(path.join(dataDir, 'gateway.db'));
    expect(row!.totp_secret).not.toBeNull();
    expect(row!.totp_secret).not.toContain(secret);
    const next = operatorTotpCode(secret, Date.now() + 30_000);
    expect((await callAt(s.url, 'POST', '/v1/admin/sessions', null, { email: 'ops@upgrade.example', password, code: next })).status).toBe(201);
  });
});

describe("a data directory whose operators' TOTP secrets are stored in clear", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-clear-totp-'));
  const password = 'clear-text era password';
  const enrolled = newOperatorTotpSecret();
  const pending = newOperatorTotpSecret();
  let dataDir: string;
  let s: StandaloneProcess | undefined;
  const signIn = (email: string, code?: string) => callAt(s!.url, 'POST', '/v1/admin/sessions', null, { email, password, ...(code ? { code } : {}) });

  beforeAll(() => {
    dataDir = copyOfFixture(root, 'clear');
    // The operator tables as the releases before sealing wrote them: one operator enrolled, one
    // half-way through enrolment, both secrets in clear; no operators data version.
    const db = new Database(path.join(dataDir, 'gateway.db'));
    db.exec(`CREATE TABLE operators (id TEXT PRIMARY KEY, email TEXT NOT NULL UNIQUE, role TEXT NOT NULL, status TEXT NOT NULL, password_hash TEXT NOT NULL,
               totp_secret TEXT, totp_pending TEXT, totp_last_step INTEGER, created_at TEXT NOT NULL);
             CREATE TABLE operator_sessions (id TEXT PRIMARY KEY, operator_id TEXT NOT NULL REFERENCES operators(id) ON DELETE CASCADE, token_hash TEXT NOT NULL UNIQUE,
               created_at TEXT NOT NULL, expires_at TEXT NOT NULL, max_expires_at TEXT NOT NULL, address TEXT);
             CREATE TABLE audit_log (id TEXT PRIMARY KEY, at TEXT NOT NULL, actor_kind TEXT NOT NULL, actor_id TEXT, actor TEXT NOT NULL, project TEXT,
               method TEXT NOT NULL, path TEXT NOT NULL, status INTEGER NOT NULL, address TEXT);`);
    const insert = db.prepare('INSERT INTO operators VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?)');
    const hash = bcrypt.hashSync(password, 4);
    insert.run('op_enrolled', 'enrolled@ops.example', 'owner', 'active', hash, enrolled, null, '2026-01-01T00:00:00.000Z');
    insert.run('op_pending', 'pending@ops.example', 'viewer', 'active', hash, null, pending, '2026-01-01T00:00:01.000Z');
    db.close();
    expect(totpColumns(path.join(dataDir, 'gateway.db'))).toEqual([
      { email: 'enrolled@ops.example', totp_secret: enrolled, totp_pending: null },
      { email: 'pending@ops.example', totp_secret: null, totp_pending: pending },
    ]);
  });
  afterAll(async () => {
    if (s) await stopStandalone(s);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('seals them in place at the upgrade; the enrolled operator signs in with a code, before and after a restart', async () => {
    s = await startStandalone(dataDir, { PLINTH_WORKERS: '2' });
    const gatewayDb = path.join(dataDir, 'gateway.db');
    const [a, b] = totpColumns(gatewayDb);
    expect(a!.totp_secret).toMatch(/^[A-Za-z0-9_-]{60,}$/);
    expect(b!.totp_pending).toMatch(/^[A-Za-z0-9_-]{60,}$/);
    expect(JSON.stringify(totpColumns(gatewayDb))).not.toMatch(new RegExp(`${enrolled}|${pending}`));
    expect(versions(gatewayDb)).toContainEqual({ component: 'operators', version: 1, release: '0.1.0' });

    expect((await signIn('enrolled@ops.example')).body.details).toEqual({ code_required: true });
    expect((await signIn('enrolled@ops.example', '000000')).status).toBe(401);
    expect((await signIn('enrolled@ops.example', operatorTotpCode(enrolled))).status).toBe(201);
    // The enrolment under way at the upgrade is confirmed with a code of the secret it handed out.
    const viewer = await signIn('pending@ops.example');
    expect(viewer.status).toBe(201);
    const confirmed = await callAt(s.url, 'POST', '/v1/admin/me/totp/confirm', viewer.body.token as string, { code: operatorTotpCode(pending) });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.operator).toMatchObject({ totp: true });
    expect(totpColumns(gatewayDb)[1]!.totp_secret).not.toContain(pending);

    await stopStandalone(s);
    s = await startStandalone(dataDir, { PLINTH_WORKERS: '2' });
    expect((await signIn('enrolled@ops.example', operatorTotpCode(enrolled, Date.now() + 30_000))).status).toBe(201);
    expect((await signIn('pending@ops.example', operatorTotpCode(pending, Date.now() + 30_000))).status).toBe(201);
    // Migrated once: the sealed values are the ones the first start wrote.
    expect(totpColumns(gatewayDb)[0]).toEqual(a);
  }, 90_000);
});

describe('a data directory of a newer release', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-newer-'));
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  // Each store, with the newest data version this release knows: auth.db and gateway.db come
  // from the previous release; webhooks.db was written by the newer one only.
  it.each([
    ['auth.db', 'auth', 1],
    ['gateway.db', 'operators', 1],
    ['webhooks.db', 'webhook-queue', 0],
    ['webhooks.db', 'webhooks', 2],
  ])('%s holding %s data of a newer release: refuses to start with one line naming the database, the versions and what to do', async (file, component, latest) => {
    const dataDir = copyOfFixture(root, `newer-${component}`);
    const target = path.join(dataDir, file);
    const db = new Database(target);
    db.exec('CREATE TABLE IF NOT EXISTS plinth_data_version (component TEXT PRIMARY KEY, version INTEGER NOT NULL, release TEXT NOT NULL, migrated_at TEXT NOT NULL)');
    db.prepare("INSERT INTO plinth_data_version VALUES (?, 7, '0.9.0', '2027-01-01T00:00:00.000Z')").run(component);
    db.close();
    const tables = () => {
      const d = new Database(target, { readonly: true });
      const all = d.prepare('SELECT name, sql FROM sqlite_master ORDER BY name').all();
      d.close();
      return all;
    };
    const before = tables();
    const failure = await startStandalone(dataDir).then(
      async (s) => {
        await stopStandalone(s);
        return '';
      },
      (e: Error) => e.message,
    );
    const lines = failure.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('standalone did not start'));
    expect(lines).toEqual([
      `${target} holds ${component} data version 7 (written by Plinth 0.9.0), newer than this Plinth 0.1.0 knows (${latest}): run that release or a later one, or restore a backup taken before the upgrade (docs/operators.md "Upgrades and rollback").`,
    ]);
    // Nothing of it changed — but what another component in the same file made (webhooks.db
    // holds the webhook queue's outbox too, which opens first and is at its own data version).
    const others = (t: { name: string }) => component === 'webhooks' && t.name.includes('webhook_outbox');
    expect((tables() as Array<{ name: string }>).filter((t) => !others(t))).toEqual(before);
    expect(versions(target)).toContainEqual({ component, version: 7, release: '0.9.0' });
  }, 60_000);
});
