import { asProjectId, ConflictError, openSqlite } from '@plinth/shared';
import { newUserRecord } from '../src/domain/new-user';
import { SqliteUserStore } from '../src/store/sqlite-user-store';
import { describeIdentityContract } from './identity-store-contract';
import { describeUserStoreContract } from './user-store-contract';

describeUserStoreContract('sqlite', async () => {
  const db = openSqlite(':memory:');
  return {
    store: new SqliteUserStore(db),
    cleanup: async () => {
      db.close();
    },
  };
});

describeIdentityContract('sqlite', async () => {
  const db = openSqlite(':memory:');
  return {
    store: new SqliteUserStore(db),
    cleanup: async () => {
      db.close();
    },
  };
});

describe('SqliteUserStore specifics', () => {
  it('finds expired one-time tokens through an index, so using a token does not read every other one', () => {
    const db = openSqlite(':memory:');
    new SqliteUserStore(db);
    const plan = db.prepare('EXPLAIN QUERY PLAN DELETE FROM auth_one_time_tokens WHERE expires_at <= ?').all(0) as Array<{ detail: string }>;
    expect(plan.map((r) => r.detail).join('\n')).toMatch(/USING (COVERING )?INDEX auth_one_time_tokens_expiry/);
    db.close();
  });

  it('a database from before anonymous users (e-mail NOT NULL) is rebuilt once: rows, unique e-mails and indexes kept, null e-mails allowed', async () => {
    const db = openSqlite(':memory:');
    db.exec(`CREATE TABLE auth_users (
      project TEXT NOT NULL, id TEXT NOT NULL, email TEXT NOT NULL, email_verified INTEGER NOT NULL,
      display_name TEXT, photo_url TEXT, status TEXT NOT NULL, password_hash TEXT, metadata TEXT NOT NULL,
      last_sign_in_at TEXT, created_at TEXT NOT NULL, claims TEXT NOT NULL DEFAULT '{}', PRIMARY KEY (project, id)
    )`);
    db.prepare(`INSERT INTO auth_users VALUES ('proj-old', 'usr_old', 'old@example.com', 1, 'Old', NULL, 'active', 'h', '{}', NULL, '2030-01-01T00:00:00.000Z', '{"role":"x"}')`).run();
    const store = new SqliteUserStore(db);
    const project = asProjectId('proj-old');
    expect(await store.getUserByEmail(project, 'old@example.com')).toMatchObject({ id: 'usr_old', display_name: 'Old', claims: { role: 'x' }, is_anonymous: false, password_hash: 'h' });
    await expect(store.createUser(project, newUserRecord('OLD@example.com', {}, Date.now()))).rejects.toThrow(ConflictError);
    await store.createUser(project, newUserRecord(null, { is_anonymous: true }, Date.now()));
    const indexes = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'auth_users'").all() as Array<{ name: string }>).map((r) => r.name);
    expect(indexes).toEqual(expect.arrayContaining(['auth_users_email', 'auth_users_created', 'auth_users_anonymous_idle']));
    new SqliteUserStore(db); // a second start changes nothing
    expect((await store.listUsers(project, { limit: 10, offset: 0 })).total).toBe(2);
    db.close();
  });
});
