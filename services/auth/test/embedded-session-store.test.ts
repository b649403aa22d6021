import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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

  it('after every 100th new session, prunes long-ended sessions with their refresh tokens in steps, keeping the rest', async () => {
    const db = openSqlite(':memory:');
    const store = new EmbeddedSessionStore(db);
    const now = Date.now();
    const longAgo = now - REVOCATION_RETENTION_SECONDS * 1000 - 60_000;
    const putSession = db.prepare(
      'INSERT INTO auth_sessions (project, id, user_id, created_at, expires_at, current_hash, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    const putToken = db.prepare('INSERT INTO auth_refresh_tokens (project, hash, sid) VALUES (?, ?, ?)');
    db.transaction(() => {
      // 250 sessions that ended long ago (expired, or revoked), two refresh tokens each…
      for (let i = 0; i < 250; i++) {
        putSession.run(project, `ses_old${i}`, 'usr_a', longAgo, i % 2 ? now + 60_000 : longAgo, `o${i}`, i % 2 ? longAgo : null);
        putToken.run(project, `o${i}-1`, `ses_old${i}`);
        putToken.run(project, `o${i}-2`, `ses_old${i}`);
      }
      // …and two that ended within the retention: a token of theirs may still be presented.
      putSession.run(project, 'ses_recent_expiry', 'usr_a', longAgo, now - 1000, 'r1', null);
      putSession.run(project, 'ses_recent_revoke', 'usr_a', longAgo, now + 60_000, 'r2', now - 1000);
      putToken.run(project, 'r1', 'ses_recent_expiry');
      putToken.run(project, 'r2', 'ses_recent_revoke');
    })();
    const count = (sql: string) => db.prepare(sql).pluck().get() as number;
    const old = () => count("SELECT count(*) FROM auth_sessions WHERE id LIKE 'ses_old%'");
    const fresh = (i: number) => ({ id: `ses_new${i}`, user_id: 'usr_b', refresh_hash: `n${i}`, now, expires_at: now + 60_000 });

    for (let i = 0; i < 99; i++) await store.create(project, fresh(i));
    expect(old()).toBe(250);
    // The 100th new session starts a prune: it is made, with ended sessions still left after it.
    await store.create(project, fresh(99));
    expect(await store.getActive(project, 'ses_new99', now)).not.toBeNull();
    expect(old()).toBeGreaterThan(0);
    expect(old()).toBeLessThan(250);
    for (let turns = 0; old() > 0 && turns < 100; turns++) await new Promise((r) => setImmediate(r));
    expect(old()).toBe(0);
    expect(count("SELECT count(*) FROM auth_refresh_tokens WHERE sid LIKE 'ses_old%'")).toBe(0);
    expect(count('SELECT count(*) FROM auth_sessions')).toBe(100 + 2);
    expect(count('SELECT count(*) FROM auth_refresh_tokens')).toBe(100 + 2);
    db.close();
  });
});
