import { asProjectId, ConflictError, type ProjectId } from '@plinth/shared';
import { DEFAULT_AUTH_SETTINGS } from '../src/domain/auth-settings';
import { newUserRecord } from '../src/domain/new-user';
import { mailSlotKey, type UserRecord, type UserStore } from '../src/store/user-store';
import { describeFactorStoreContract } from './factor-store-contract';
import { freshStorePerTest, type StoreFixture } from './forwarding-handle';


const T0 = Date.UTC(2030, 0, 1);
const MIN = 60_000;

function user(email: string, over: Partial<UserRecord> = {}): UserRecord {
  return newUserRecord(email, over, Date.now());
}

/** The guarantees of the UserStore port (src/store/user-store.ts), run against every adapter. */
export function describeUserStoreContract(name: string, makeStore: () => Promise<StoreFixture<UserStore>>): void {
  describe(`UserStore contract: ${name}`, () => {
    const store = freshStorePerTest(makeStore);
    const project: ProjectId = asProjectId('proj-one');
    const other: ProjectId = asProjectId('proj-two');

    describeFactorStoreContract(store);

    describe('users', () => {
      it('creates and reads a user by id and by e-mail in any case', async () => {
        const u = user('Ada@Example.com', { metadata: { plan: 'pro', n: [1, 2] }, password_hash: 'opaque' });
        await store.createUser(project, u);
        const expected = { ...u, email: 'ada@example.com' };
        expect(await store.getUser(project, u.id)).toEqual(expected);
        expect(await store.getUserByEmail(project, 'ADA@example.COM')).toEqual(expected);
        expect(await store.getUser(other, u.id)).toBeNull();
        expect(await store.getUserByEmail(other, 'ada@example.com')).toBeNull();
        expect(await store.getUser(project, 'usr_nope')).toBeNull();
      });

      it('refuses a second user with the same e-mail, case-insensitively, with ConflictError', async () => {
        await store.createUser(project, user('ada@example.com'));
        await expect(store.createUser(project, user('ADA@example.com'))).rejects.toThrow(ConflictError);
        await expect(store.createUser(other, user('ada@example.com'))).resolves.toBeUndefined();
      });

      it('updates fields and returns the new user; null for an unknown id', async () => {
        const u = user('ada@example.com');
        await store.createUser(project, u);
        const next = await store.updateUser(project, u.id, { status: 'disabled', display_name: 'Ada', metadata: { a: 1 } });
        expect(next).toEqual({ ...u, status: 'disabled', display_name: 'Ada', metadata: { a: 1 } });
        expect(await store.getUser(project, u.id)).toEqual(next);
        expect(await store.updateUser(project, 'usr_nope', { status: 'active' })).toBeNull();
        expect(await store.updateUser(other, u.id, { status: 'active' })).toBeNull();
      });

      it('refuses an update to a taken e-mail with ConflictError', async () => {
        const a = user('a@example.com');
        await store.createUser(project, a);
        await store.createUser(project, user('b@example.com'));
        await expect(store.updateUser(project, a.id, { email: 'B@example.com' })).rejects.toThrow(ConflictError);
        expect((await store.getUser(project, a.id))?.email).toBe('a@example.com');
      });

      it('deleting a user frees the e-mail', async () => {
        const u = user('ada@example.com');
        await store.createUser(project, u);
        expect(await store.deleteUser(project, u.id)).toBe(true);
        expect(await store.deleteUser(project, u.id)).toBe(false);
        expect(await store.getUser(project, u.id)).toBeNull();
        await expect(store.createUser(project, user('ada@example.com'))).resolves.toBeUndefined();
      });

      it('lists in creation order with total, limit, offset and a case-insensitive search', async () => {
        const base = Date.UTC(2030, 0, 1);
        const names = ['Alice Smith', 'Bob', null, 'Carol SMITHSON'];
        const emails = ['alice@x.io', 'bob@smith.org', 'dan@x.io', 'carol@y.io'];
        const made: UserRecord[] = [];
        for (let i = 0; i < 4; i++) {
          const u = user(emails[i]!, { display_name: names[i]!, created_at: new Date(base + i * 1000).toISOString() });
          made.push(u);
          await store.createUser(project, u);
        }
        await store.createUser(other, user('smith@other.io'));
        const all = await store.listUsers(project, { limit: 10, offset: 0 });
        expect(all.total).toBe(4);
        expect(all.users.map((u) => u.email)).toEqual(emails);
        const page = await store.listUsers(project, { limit: 2, offset: 1 });
        expect(page).toEqual({ users: [made[1], made[2]], total: 4 });
        const smith = await store.listUsers(project, { search: 'SMITH', limit: 10, offset: 0 });
        expect(smith.users.map((u) => u.email)).toEqual(['alice@x.io', 'bob@smith.org', 'carol@y.io']);
        expect(smith.total).toBe(3);
        const dotted = await store.listUsers(project, { search: 'x.io', limit: 1, offset: 0 });
        expect(dotted).toEqual({ users: [made[0]], total: 2 });
        expect(await store.listUsers(project, { search: '.*', limit: 10, offset: 0 })).toEqual({ users: [], total: 0 });
      });
    });


    describe('anonymous users', () => {
      const anon = (lastSignIn: number) =>
        newUserRecord(null, { is_anonymous: true, last_sign_in_at: new Date(lastSignIn).toISOString() }, lastSignIn);

      it('stores any number of users without an e-mail, and reads them back as anonymous', async () => {
        const a = anon(T0);
        const b = anon(T0);
        await store.createUser(project, a);
        await store.createUser(project, b);
        expect(await store.getUser(project, a.id)).toEqual(a);
        expect((await store.getUser(project, b.id))?.email).toBeNull();
        const { users, total } = await store.listUsers(project, { limit: 10, offset: 0 });
        expect(total).toBe(2);
        expect(users.map((u) => u.is_anonymous)).toEqual([true, true]);
      });

      it('lists only anonymous users, or only the others, when asked', async () => {
        const a = anon(T0);
        const named = user('named@example.com');
        await store.createUser(project, a);
        await store.createUser(project, named);
        const only = async (anonymous: boolean) => (await store.listUsers(project, { anonymous, limit: 10, offset: 0 }));
        expect(await only(true)).toEqual({ users: [a], total: 1 });
        expect(await only(false)).toEqual({ users: [{ ...named, email: 'named@example.com' }], total: 1 });
        expect((await store.listUsers(project, { limit: 10, offset: 0 })).total).toBe(2);
      });

      it('an upgrade gives the user an e-mail (unique as any other) and keeps its id', async () => {
        await store.createUser(project, user('taken@example.com'));
        const a = anon(T0);
        await store.createUser(project, a);
        await expect(store.updateUser(project, a.id, { email: 'TAKEN@example.com', is_anonymous: false })).rejects.toThrow(ConflictError);
        const up = await store.updateUser(project, a.id, { email: 'Guest@example.com', is_anonymous: false, password_hash: 'h' });
        expect(up).toEqual({ ...a, email: 'guest@example.com', is_anonymous: false, password_hash: 'h' });
        expect((await store.getUserByEmail(project, 'guest@example.com'))?.id).toBe(a.id);
      });

      it('deleteIdleAnonymousUsers removes anonymous users signed in before the cut-off, in every project, and nobody else', async () => {
        const old = anon(T0);
        const oldElsewhere = anon(T0);
        const recent = anon(T0 + 10 * MIN);
        const named = user('old@example.com', { last_sign_in_at: new Date(T0).toISOString() });
        await store.createUser(project, old);
        await store.createUser(other, oldElsewhere);
        await store.createUser(project, recent);
        await store.createUser(project, named);
        expect(await store.deleteIdleAnonymousUsers(new Date(T0 + 5 * MIN).toISOString())).toBe(2);
        expect(await store.getUser(project, old.id)).toBeNull();
        expect(await store.getUser(other, oldElsewhere.id)).toBeNull();
        expect(await store.getUser(project, recent.id)).not.toBeNull();
        expect(await store.getUser(project, named.id)).not.toBeNull();
        expect(await store.deleteIdleAnonymousUsers(new Date(T0 + 5 * MIN).toISOString())).toBe(0);
      });
    });

    describe('one-time tokens', () => {
      it('consumes a token once, only with its kind, project and before expiry', async () => {
        await store.putOneTimeToken(project, { token_hash: 'th1', kind: 'verify', user_id: 'usr_a', expires_at: T0 + MIN });
        expect(await store.consumeOneTimeToken(project, 'reset', 'th1', T0)).toBeNull();
        expect(await store.consumeOneTimeToken(other, 'verify', 'th1', T0)).toBeNull();
        expect(await store.consumeOneTimeToken(project, 'verify', 'th1', T0)).toBe('usr_a');
        expect(await store.consumeOneTimeToken(project, 'verify', 'th1', T0)).toBeNull();
      });

      it('refuses an expired token', async () => {
        await store.putOneTimeToken(project, { token_hash: 'th2', kind: 'reset', user_id: 'usr_a', expires_at: T0 + MIN });
        expect(await store.consumeOneTimeToken(project, 'reset', 'th2', T0 + MIN)).toBeNull();
      });

      it("deleting a user deletes the user's tokens", async () => {
        const u = user('ada@example.com');
        await store.createUser(project, u);
        await store.putOneTimeToken(project, { token_hash: 'th3', kind: 'reset', user_id: u.id, expires_at: T0 + MIN });
        await store.deleteUser(project, u.id);
        expect(await store.consumeOneTimeToken(project, 'reset', 'th3', T0)).toBeNull();
      });

      it('of two racing consumers exactly one wins', async () => {
        await store.putOneTimeToken(project, { token_hash: 'th4', kind: 'verify', user_id: 'usr_a', expires_at: T0 + MIN });
        const r = await Promise.all([
          store.consumeOneTimeToken(project, 'verify', 'th4', T0),
          store.consumeOneTimeToken(project, 'verify', 'th4', T0),
        ]);
        expect(r.filter((x) => x === 'usr_a')).toHaveLength(1);
      });
    });

    describe('second-round additions', () => {
      it('keeps custom claims with the user', async () => {
        const u = user('ada@example.com', { claims: { role: 'admin', teams: ['a', 'b'] } });
        await store.createUser(project, u);
        expect((await store.getUser(project, u.id))?.claims).toEqual({ role: 'admin', teams: ['a', 'b'] });
        expect((await store.updateUser(project, u.id, { claims: { role: 'viewer' } }))?.claims).toEqual({ role: 'viewer' });
      });

      it('takeOneTimeToken answers the whole token with its e-mail and session; deleteOneTimeTokens removes only the given kinds of that user', async () => {
        await store.putOneTimeToken(project, { token_hash: 'e1', kind: 'email-change', user_id: 'usr_a', expires_at: T0 + MIN, email: 'new@example.com', sid: 'ses_1' });
        expect(await store.takeOneTimeToken(project, 'email-change', 'e1', T0)).toEqual({
          token_hash: 'e1', kind: 'email-change', user_id: 'usr_a', expires_at: T0 + MIN, email: 'new@example.com', sid: 'ses_1',
        });
        await store.putOneTimeToken(project, { token_hash: 'v0', kind: 'verify', user_id: 'usr_a', expires_at: T0 + MIN });
        expect(await store.takeOneTimeToken(project, 'verify', 'v0', T0)).toEqual({ token_hash: 'v0', kind: 'verify', user_id: 'usr_a', expires_at: T0 + MIN });
        await store.putOneTimeToken(project, { token_hash: 'r1', kind: 'reset', user_id: 'usr_a', expires_at: T0 + MIN });
        await store.putOneTimeToken(project, { token_hash: 'r2', kind: 'reset', user_id: 'usr_b', expires_at: T0 + MIN });
        await store.putOneTimeToken(project, { token_hash: 'v1', kind: 'verify', user_id: 'usr_a', expires_at: T0 + MIN });
        await store.deleteOneTimeTokens(project, 'usr_a', ['reset']);
        expect(await store.consumeOneTimeToken(project, 'reset', 'r1', T0)).toBeNull();
        expect(await store.consumeOneTimeToken(project, 'reset', 'r2', T0)).toBe('usr_b');
        expect(await store.consumeOneTimeToken(project, 'verify', 'v1', T0)).toBe('usr_a');
      });

      it('deleteOtp ends the live code', async () => {
        await store.issueOtp(project, { email: 'ada@example.com', code_hash: 'c1', now: T0, expires_at: T0 + 10 * MIN, resend_after: T0 - MIN });
        await store.deleteOtp(project, 'ada@example.com');
        expect(await store.redeemOtp(project, 'ada@example.com', 'c1', T0, 5)).toBe(false);
      });

      it("deleting a user frees their mail slots, and only theirs", async () => {
        const u = user('ada@example.com');
        await store.createUser(project, u);
        expect(await store.claimMailSlot(project, mailSlotKey('verify', u.id), T0, MIN)).toBe(true);
        expect(await store.claimMailSlot(project, mailSlotKey('reset', u.id), T0, MIN)).toBe(true);
        expect(await store.claimMailSlot(project, mailSlotKey('reset', 'usr_other'), T0, MIN)).toBe(true);
        expect(await store.deleteUser(project, u.id)).toBe(true);
        expect(await store.claimMailSlot(project, mailSlotKey('verify', u.id), T0 + 1, MIN)).toBe(true);
        expect(await store.claimMailSlot(project, mailSlotKey('reset', u.id), T0 + 1, MIN)).toBe(true);
        expect(await store.claimMailSlot(project, mailSlotKey('reset', 'usr_other'), T0 + 1, MIN)).toBe(false);
      });

      it('searches with the same case folding on every store, beyond ASCII', async () => {
        await store.createUser(project, user('emile@x.io', { display_name: 'Émile Zola' }));
        await store.createUser(project, user('kelvin@x.io', { display_name: '\u212A2 probe' }));
        await store.createUser(project, user('ÖRJAN@x.io'));
        const found = async (search: string) => (await store.listUsers(project, { search, limit: 10, offset: 0 })).users.map((u) => u.email);
        expect(await found('émile')).toEqual(['emile@x.io']);
        expect(await found('ÉMILE')).toEqual(['emile@x.io']);
        // KELVIN SIGN lower-cases to "k": found by "k2", as foldCase says, on both stores.
        expect(await found('k2')).toEqual(['kelvin@x.io']);
        expect(await found('örjan')).toEqual(['örjan@x.io']);
        const renamed = (await store.listUsers(project, { search: 'zola', limit: 10, offset: 0 })).users[0] as UserRecord;
        await store.updateUser(project, renamed.id, { display_name: 'ÉTIENNE' });
        expect(await found('étienne')).toEqual(['emile@x.io']);
        expect(await found('zola')).toEqual([]);
      });

      it('claimMailSlot grants one send per key per interval, per project', async () => {
        expect(await store.claimMailSlot(project, 'verify:usr_a', T0, MIN)).toBe(true);
        expect(await store.claimMailSlot(project, 'verify:usr_a', T0 + MIN - 1, MIN)).toBe(false);
        expect(await store.claimMailSlot(other, 'verify:usr_a', T0, MIN)).toBe(true);
        expect(await store.claimMailSlot(project, 'reset:usr_a', T0, MIN)).toBe(true);
        expect(await store.claimMailSlot(project, 'verify:usr_a', T0 + MIN, MIN)).toBe(true);
        const racing = await Promise.all([store.claimMailSlot(project, 'x', T0, MIN), store.claimMailSlot(project, 'x', T0, MIN)]);
        expect(racing.filter(Boolean)).toHaveLength(1);
      });
    });

    describe('OTP codes', () => {
      const issue = (email: string, code: string, now: number) =>
        store.issueOtp(project, { email, code_hash: code, now, expires_at: now + 10 * MIN, resend_after: now - MIN });

      it('redeems the right code once, case-insensitively on the e-mail', async () => {
        expect(await issue('Ada@example.com', 'c1', T0)).toBe(true);
        expect(await store.redeemOtp(other, 'ada@example.com', 'c1', T0 + 1, 5)).toBe(false);
        expect(await store.redeemOtp(project, 'ada@EXAMPLE.com', 'c1', T0 + 1, 5)).toBe(true);
        expect(await store.redeemOtp(project, 'ada@example.com', 'c1', T0 + 2, 5)).toBe(false);
      });

      it('refuses a second send within the interval and keeps the first code', async () => {
        expect(await issue('ada@example.com', 'c1', T0)).toBe(true);
        expect(await issue('ada@example.com', 'c2', T0 + 59_000)).toBe(false);
        expect(await store.redeemOtp(project, 'ada@example.com', 'c2', T0 + 59_000, 5)).toBe(false);
        expect(await store.redeemOtp(project, 'ada@example.com', 'c1', T0 + 59_000, 5)).toBe(true);
      });

      it('a new send after the interval replaces the code (one live code per e-mail)', async () => {
        expect(await issue('ada@example.com', 'c1', T0)).toBe(true);
        expect(await issue('ada@example.com', 'c2', T0 + MIN)).toBe(true);
        expect(await store.redeemOtp(project, 'ada@example.com', 'c1', T0 + MIN, 5)).toBe(false);
        expect(await store.redeemOtp(project, 'ada@example.com', 'c2', T0 + MIN, 5)).toBe(true);
      });

      it('counts wrong guesses: after maxAttempts even the right code fails', async () => {
        await issue('ada@example.com', 'c1', T0);
        for (let i = 0; i < 5; i++) expect(await store.redeemOtp(project, 'ada@example.com', 'wrong', T0, 5)).toBe(false);
        expect(await store.redeemOtp(project, 'ada@example.com', 'c1', T0, 5)).toBe(false);
      });

      it('the last allowed attempt may still succeed', async () => {
        await issue('ada@example.com', 'c1', T0);
        for (let i = 0; i < 4; i++) await store.redeemOtp(project, 'ada@example.com', 'wrong', T0, 5);
        expect(await store.redeemOtp(project, 'ada@example.com', 'c1', T0, 5)).toBe(true);
      });

      it('refuses an expired code', async () => {
        await issue('ada@example.com', 'c1', T0);
        expect(await store.redeemOtp(project, 'ada@example.com', 'c1', T0 + 10 * MIN, 5)).toBe(false);
      });
    });

    describe('signing keys and settings', () => {
      const key = (kid: string, created: number) => ({
        kid,
        private_pem: `pem-${kid}`,
        public_jwk: { kty: 'EC', crv: 'P-256', x: kid, y: kid },
        created_at: created,
        verify_until: null,
      });

      it('lists keys newest first and retires all but one', async () => {
        await store.addSigningKey(project, key('k1', T0));
        await store.addSigningKey(project, key('k2', T0 + 1));
        await store.addSigningKey(other, key('k9', T0));
        expect((await store.listSigningKeys(project)).map((k) => k.kid)).toEqual(['k2', 'k1']);
        await store.retireSigningKeys(project, 'k2', T0 + 5);
        expect(await store.listSigningKeys(project)).toEqual([key('k2', T0 + 1), { ...key('k1', T0), verify_until: T0 + 5 }]);
        await store.retireSigningKeys(project, 'k2', T0 + 99);
        expect((await store.listSigningKeys(project))[1]?.verify_until).toBe(T0 + 5);
        expect((await store.listSigningKeys(other))[0]?.verify_until).toBeNull();
      });

      it('stores settings per project; null before the first save', async () => {
        expect(await store.getSettings(project)).toBeNull();
        const s = { ...DEFAULT_AUTH_SETTINGS, enabled: true, redirect_url: 'https://app.example/auth' };
        await store.putSettings(project, s);
        await store.putSettings(project, { ...s, access_token_ttl: 120 });
        expect(await store.getSettings(project)).toEqual({ ...s, access_token_ttl: 120 });
        expect(await store.getSettings(other)).toBeNull();
      });

      it('answers ping', async () => {
        await expect(store.ping()).resolves.toBeUndefined();
      });

      it('purgeProject deletes users, tokens, codes, mail slots, keys and settings of the project, nothing of another', async () => {
        const seed = async (p: ProjectId) => {
          const u = user('ada@example.com', { password_hash: 'hash' });
          await store.createUser(p, u);
          await store.putOneTimeToken(p, { token_hash: 'th-purge', kind: 'verify', user_id: u.id, expires_at: T0 + MIN });
          await store.issueOtp(p, { email: 'ada@example.com', code_hash: 'c-purge', now: T0, expires_at: T0 + 10 * MIN, resend_after: T0 - MIN });
          await store.addSigningKey(p, key('k-purge', T0));
          await store.putSettings(p, { ...DEFAULT_AUTH_SETTINGS, enabled: true });
          return u;
        };
        const gone = await seed(project);
        const kept = await seed(other);
        for (const p of [project, other]) expect(await store.claimMailSlot(p, mailSlotKey('verify', gone.id), T0, MIN)).toBe(true);
        await store.purgeProject(project);
        await store.purgeProject(project);
        expect(await store.getUser(project, gone.id)).toBeNull();
        expect((await store.listUsers(project, { limit: 10, offset: 0 })).total).toBe(0);
        expect(await store.consumeOneTimeToken(project, 'verify', 'th-purge', T0)).toBeNull();
        expect(await store.redeemOtp(project, 'ada@example.com', 'c-purge', T0 + 1, 5)).toBe(false);
        expect(await store.listSigningKeys(project)).toEqual([]);
        expect(await store.getSettings(project)).toBeNull();
        // The e-mail is free again in the purged project.
        await expect(store.createUser(project, user('ada@example.com'))).resolves.toBeUndefined();
        // The other project keeps everything.
        expect(await store.getUser(other, kept.id)).toEqual({ ...kept });
        expect(await store.consumeOneTimeToken(other, 'verify', 'th-purge', T0)).toBe(kept.id);
        expect(await store.redeemOtp(other, 'ada@example.com', 'c-purge', T0 + 1, 5)).toBe(true);
        expect(await store.listSigningKeys(other)).toHaveLength(1);
        expect((await store.getSettings(other))?.enabled).toBe(true);
        // Mail slots: the purged project's are gone, the other's kept.
        expect(await store.claimMailSlot(project, mailSlotKey('verify', gone.id), T0 + 1, MIN)).toBe(true);
        expect(await store.claimMailSlot(other, mailSlotKey('verify', gone.id), T0 + 1, MIN)).toBe(false);
      });
    });
  });
}
