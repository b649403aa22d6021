import { openSqlite } from '@plinth/shared';
import { SqliteUserStore } from '../src/store/sqlite-user-store';
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

describe('SqliteUserStore specifics', () => {
  it('finds expired one-time tokens through an index, so using a token does not read every other one', () => {
    const db = openSqlite(':memory:');
    new SqliteUserStore(db);
    const plan = db.prepare('EXPLAIN QUERY PLAN DELETE FROM auth_one_time_tokens WHERE expires_at <= ?').all(0) as Array<{ detail: string }>;
    expect(plan.map((r) => r.detail).join('\n')).toMatch(/USING (COVERING )?INDEX auth_one_time_tokens_expiry/);
    db.close();
  });
});
