import { asProjectId, ConflictError, type ProjectId } from '@plinth/shared';
import { newUserRecord } from '../src/domain/new-user';
import type { IdentityRecord, UserStore } from '../src/store/user-store';
import { freshStorePerTest, type StoreFixture } from './forwarding-handle';

function identity(userId: string, provider: string, subject: string, over: Partial<IdentityRecord> = {}): IdentityRecord {
  return { provider, subject, user_id: userId, email: 'ada@example.com', email_verified: true, created_at: new Date(Date.UTC(2030, 0, 1)).toISOString(), ...over };
}

/** The identity guarantees of the UserStore port (linked provider accounts), run against every adapter. */
export function describeIdentityContract(name: string, makeStore: () => Promise<StoreFixture<UserStore>>): void {
  describe(`UserStore identities contract: ${name}`, () => {
    const store = freshStorePerTest(makeStore);
    const project: ProjectId = asProjectId('proj-one');
    const other: ProjectId = asProjectId('proj-two');

    it('links, finds by provider account, lists by user (oldest first) and unlinks', async () => {
      const u = newUserRecord('ada@example.com', {}, Date.now());
      await store.createUser(project, u);
      const google = identity(u.id, 'google', 'g-1');
      const github = identity(u.id, 'github', '42', { created_at: new Date(Date.UTC(2030, 0, 2)).toISOString(), email_verified: false, email: null });
      await store.linkIdentity(project, github);
      await store.linkIdentity(project, google);
      expect(await store.getIdentity(project, 'google', 'g-1')).toEqual(google);
      expect(await store.getIdentity(other, 'google', 'g-1')).toBeNull();
      expect(await store.listIdentities(project, u.id)).toEqual([google, github]);
      expect(await store.unlinkIdentity(project, u.id, 'google')).toBe(true);
      expect(await store.unlinkIdentity(project, u.id, 'google')).toBe(false);
      expect(await store.getIdentity(project, 'google', 'g-1')).toBeNull();
      expect(await store.listIdentities(project, u.id)).toEqual([github]);
    });

    it('a provider account belongs to one user, and a user has one identity per provider (ConflictError)', async () => {
      const a = newUserRecord('a@example.com', {}, Date.now());
      const b = newUserRecord('b@example.com', {}, Date.now());
      await store.createUser(project, a);
      await store.createUser(project, b);
      await store.linkIdentity(project, identity(a.id, 'google', 'g-1'));
      await expect(store.linkIdentity(project, identity(b.id, 'google', 'g-1'))).rejects.toThrow(ConflictError);
      await expect(store.linkIdentity(project, identity(a.id, 'google', 'g-2'))).rejects.toThrow(ConflictError);
      await store.linkIdentity(other, identity(b.id, 'google', 'g-1'));
      expect((await store.getIdentity(project, 'google', 'g-1'))?.user_id).toBe(a.id);
    });

    it('deleting the user deletes their identities; purging the project deletes every identity of it only', async () => {
      const a = newUserRecord('a@example.com', {}, Date.now());
      const b = newUserRecord('b@example.com', {}, Date.now());
      await store.createUser(project, a);
      await store.createUser(project, b);
      await store.createUser(other, b);
      await store.linkIdentity(project, identity(a.id, 'google', 'g-a'));
      await store.linkIdentity(project, identity(b.id, 'google', 'g-b'));
      await store.linkIdentity(other, identity(b.id, 'google', 'g-b'));
      expect(await store.deleteUser(project, a.id)).toBe(true);
      expect(await store.getIdentity(project, 'google', 'g-a')).toBeNull();
      expect(await store.getIdentity(project, 'google', 'g-b')).not.toBeNull();
      await store.purgeProject(project);
      expect(await store.getIdentity(project, 'google', 'g-b')).toBeNull();
      expect(await store.listIdentities(project, b.id)).toEqual([]);
      expect(await store.getIdentity(other, 'google', 'g-b')).not.toBeNull();
    });

    it('keeps the data of an oauth one-time token and gives it back once', async () => {
      const T = Date.UTC(2100, 0, 1);
      await store.putOneTimeToken(project, { token_hash: 'st', kind: 'oauth-state', user_id: '', expires_at: T, data: '{"p":"google"}' });
      expect(await store.takeOneTimeToken(project, 'oauth-exchange', 'st', T - 1)).toBeNull();
      expect(await store.takeOneTimeToken(project, 'oauth-state', 'st', T - 1)).toEqual({ token_hash: 'st', kind: 'oauth-state', user_id: '', expires_at: T, data: '{"p":"google"}' });
      expect(await store.takeOneTimeToken(project, 'oauth-state', 'st', T - 1)).toBeNull();
    });
  });
}
