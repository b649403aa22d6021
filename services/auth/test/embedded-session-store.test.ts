import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { asProjectId, openSqlite } from '@plinth/shared';
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
});
