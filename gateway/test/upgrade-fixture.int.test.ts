/**
 * Upgrades: a data directory written by the previous release (test/fixtures/release-0.1.0, made
 * once by its make-fixture.js, before data versions existed) starts under this release — two
 * worker processes opening it together — and everything reads back: keys, the collection with
 * its fields and rules, every record, the Auth settings, every user's password. Each component's
 * data version is stored once migrated (auth's first migration applied). A data directory with a
 * newer data version than this release knows refuses to start with one line and exit code 1.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { startStandalone, stopStandalone, type StandaloneProcess } from '../src/testing/standalone-process';

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
    expect(versions(path.join(dataDir, 'gateway.db'))).toEqual([{ component: 'gateway', version: 0, release: '0.1.0' }]);
  });
});

describe('a data directory of a newer release', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-newer-'));
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('refuses to start with one line naming the database, the versions and what to do', async () => {
    const dataDir = copyOfFixture(root, 'newer');
    const auth = path.join(dataDir, 'auth.db');
    const db = new Database(auth);
    db.exec('CREATE TABLE plinth_data_version (component TEXT PRIMARY KEY, version INTEGER NOT NULL, release TEXT NOT NULL, migrated_at TEXT NOT NULL)');
    db.prepare("INSERT INTO plinth_data_version VALUES ('auth', 7, '0.9.0', '2027-01-01T00:00:00.000Z')").run();
    db.close();
    const tables = () => {
      const d = new Database(auth, { readonly: true });
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
      `${auth} holds auth data version 7 (written by Plinth 0.9.0), newer than this Plinth 0.1.0 knows (1): run that release or a later one, or restore a backup taken before the upgrade (docs/operators.md "Upgrades and rollback").`,
    ]);
    expect(tables()).toEqual(before);
    expect(versions(auth)).toEqual([{ component: 'auth', version: 7, release: '0.9.0' }]);
  }, 60_000);
});
