import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { asProjectId, openSqlite, REVOCATION_RETENTION_SECONDS } from '@plinth/shared';
import { EmbeddedSessionStore } from '../src/store/embedded-session-store';
import { describeSessionStoreContract } from './session-store-contract';

describeSessionStoreContract('embedded (SQLite, in-process broadcast)', async () => {
  const db = openSqlite(':memory:');
  return {
    store: new EmbeddedSessionStore(db),
    cleanup: async () => {
      db.close();
    },
  };
});

describe('EmbeddedSessionStore specifics', () => {
  const project = asProjectId('proj-one');

  it('a database from before session assurance levels gains the column; its sessions are aal 1', async () => {
    const db = openSqlite(':memory:');
    db.exec(`CREATE TABLE auth_sessions (
      project TEXT NOT NULL, id TEXT NOT NULL, user_id TEXT NOT NULL, created_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL, current_hash TEXT NOT NULL, parent_hash TEXT, grace TEXT,
      rotated_at INTEGER, revoked_at INTEGER, PRIMARY KEY (project, id))`);
    const now = Date.now();
    db.prepare("INSERT INTO auth_sessions (project, id, user_id, created_at, expires_at, current_hash) VALUES ('proj-one', 'ses_old', 'usr_a', ?, ?, 'h')").run(now, now + 60_000);
    const store = new EmbeddedSessionStore(db);
    expect(await store.getActive(project, 'ses_old', now)).toMatchObject({ id: 'ses_old', aal: 1 });
    new EmbeddedSessionStore(db); // a second start changes nothing
    db.close();
  });

  it('two replicas starting together on a file from before aal: the second waits and adds nothing twice', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'auth-sess-'));
    const file = path.join(dir, 'auth.db');
    const old = openSqlite(file);
    old.exec(`CREATE TABLE auth_sessions (
      project TEXT NOT NULL, id TEXT NOT NULL, user_id TEXT NOT NULL, created_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL, current_hash TEXT NOT NULL, parent_hash TEXT, grace TEXT,
      rotated_at INTEGER, revoked_at INTEGER, PRIMARY KEY (project, id));
      CREATE INDEX auth_sessions_user ON auth_sessions (project, user_id);
      CREATE INDEX auth_sessions_revoked ON auth_sessions (revoked_at);
      CREATE TABLE auth_refresh_tokens (project TEXT NOT NULL, hash TEXT NOT NULL, sid TEXT NOT NULL, PRIMARY KEY (project, hash))`);
    old.close();
    // The other replica: has seen the column missing and is adding it, holding the write lock a while.
    const other = new Worker(
      `const { workerData, parentPort } = require('node:worker_threads');
       const db = new (require('better-sqlite3'))(workerData);
       db.exec('BEGIN IMMEDIATE');
       db.exec('ALTER TABLE auth_sessions ADD COLUMN aal INTEGER NOT NULL DEFAULT 1');
       parentPort.postMessage('adding');
       setTimeout(() => { db.exec('COMMIT'); db.close(); }, 300);`,
      { eval: true, workerData: file },
    );
    await new Promise((resolve) => other.once('message', resolve));
    const db = openSqlite(file);
    const store = new EmbeddedSessionStore(db); // throws "duplicate column name: aal" if it adds it again
    const now = Date.now();
    await store.create(project, { id: 'ses_new', user_id: 'usr_a', refresh_hash: 'h', now, expires_at: now + 60_000 });
    expect(await store.getActive(project, 'ses_new', now)).toMatchObject({ id: 'ses_new', aal: 1 });
    db.close();
    await other.terminate();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('keeps sessions and revocations across a restart on the same file', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'auth-sess-'));
    const file = path.join(dir, 'auth.db');
    const now = Date.now();
    const db1 = openSqlite(file);
    const first = new EmbeddedSessionStore(db1);
    await first.create(project, { id: 'ses_live', user_id: 'usr_a', refresh_hash: 'h1', now, expires_at: now + 60_000 });
    await first.create(project, { id: 'ses_gone', user_id: 'usr_a', refresh_hash: 'h2', now, expires_at: now + 60_000 });
    await first.revoke(project, 'ses_gone', now);
    db1.close();

    const db2 = openSqlite(file);
    const second = new EmbeddedSessionStore(db2);
    expect(await second.getActive(project, 'ses_live', now + 1)).not.toBeNull();
    expect(await second.revocations.isRevoked(project, 'ses_gone', Math.floor(now / 1000))).toBe(true);
    expect(await second.revocations.isRevoked(project, 'ses_live', Math.floor(now / 1000))).toBe(false);
    db2.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('broadcasts each revocation to in-process subscribers', async () => {
    const db = openSqlite(':memory:');
    const store = new EmbeddedSessionStore(db);
    const heard: string[] = [];
    store.revocations.subscribe((p, sid) => heard.push(`${p}/${sid}`));
    const now = Date.now();
    await store.create(project, { id: 'ses_1', user_id: 'usr_a', refresh_hash: 'h1', now, expires_at: now + 60_000 });
    await store.create(project, { id: 'ses_2', user_id: 'usr_a', refresh_hash: 'h2', now, expires_at: now + 60_000 });
    await store.revokeUser(project, 'usr_a', now);
    expect(heard.sort()).toEqual(['proj-one/ses_1', 'proj-one/ses_2']);
    db.close();
  });

  it('prunes long-ended sessions with their refresh tokens in steps, started by a new session at most once an hour', async () => {
    const db = openSqlite(':memory:');
    const store = new EmbeddedSessionStore(db);
    const now = Date.now();
    const longAgo = now - REVOCATION_RETENTION_SECONDS * 1000 - 60_000;
    const putSession = db.prepare(
      'INSERT INTO auth_sessions (project, id, user_id, created_at, expires_at, current_hash, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    const putToken = db.prepare('INSERT INTO auth_refresh_tokens (project, hash, sid) VALUES (?, ?, ?)');
    /** `n` sessions that ended long ago (expired, or revoked), two refresh tokens each. */
    const putEnded = (label: string, n: number) =>
      db.transaction(() => {
        for (let i = 0; i < n; i++) {
          putSession.run(project, `ses_${label}${i}`, 'usr_a', longAgo, i % 2 ? now + 60_000 : longAgo, `${label}${i}`, i % 2 ? longAgo : null);
          putToken.run(project, `${label}${i}-1`, `ses_${label}${i}`);
          putToken.run(project, `${label}${i}-2`, `ses_${label}${i}`);
        }
      })();
    putEnded('old', 500);
    // Two that ended within the retention: a token of theirs may still be presented.
    putSession.run(project, 'ses_recent_expiry', 'usr_a', longAgo, now - 1000, 'r1', null);
    putSession.run(project, 'ses_recent_revoke', 'usr_a', longAgo, now + 60_000, 'r2', now - 1000);
    putToken.run(project, 'r1', 'ses_recent_expiry');
    putToken.run(project, 'r2', 'ses_recent_revoke');
    const count = (sql: string) => db.prepare(sql).pluck().get() as number;
    const ended = (label: string) =>
      count(`SELECT count(*) FROM auth_sessions WHERE id LIKE 'ses_${label}%'`) + count(`SELECT count(*) FROM auth_refresh_tokens WHERE sid LIKE 'ses_${label}%'`);
    /** Turns of the event loop until `label`'s rows are gone, and a few more for the prune to end. */
    const pruned = async (label: string) => {
      for (let turns = 0; (ended(label) > 0 && turns < 100) || turns < 10; turns++) await new Promise((r) => setImmediate(r));
    };
    const fresh = (i: number, at = now) => ({ id: `ses_new${i}`, user_id: 'usr_b', refresh_hash: `n${i}`, now: at, expires_at: at + 60_000 });

    // The first new session starts a prune: it is made, with ended sessions still left after it.
    await store.create(project, fresh(0));
    expect(await store.getActive(project, 'ses_new0', now)).not.toBeNull();
    expect(ended('old')).toBeGreaterThan(0);
    // A session made meanwhile is kept.
    await store.create(project, fresh(1));
    await pruned('old');
    expect(ended('old')).toBe(0);
    expect(count('SELECT count(*) FROM auth_sessions')).toBe(2 + 2);
    expect(count('SELECT count(*) FROM auth_refresh_tokens')).toBe(2 + 2);

    // Within the hour, new sessions start no other prune; an hour on, the next one does.
    putEnded('later', 10);
    for (let i = 2; i < 50; i++) await store.create(project, fresh(i, now + 60_000));
    await new Promise((r) => setImmediate(r));
    expect(ended('later')).toBe(30);
    await store.create(project, fresh(50, now + 3_600_000));
    await pruned('later');
    expect(ended('later')).toBe(0);
    expect(count('SELECT count(*) FROM auth_sessions')).toBe(51 + 2);
    db.close();
  });
});
