import { asProjectId, newId, type ProjectId } from '@plinth/shared';
import type { SessionStore } from '../src/store/session-store';
import { freshStorePerTest, type StoreFixture } from './forwarding-handle';


const T0 = Date.UTC(2030, 0, 1);
const DAY = 86_400_000;
const GRACE = 10_000;

/** The guarantees of the SessionStore port (src/store/session-store.ts), run against every adapter. */
export function describeSessionStoreContract(name: string, makeStore: () => Promise<StoreFixture<SessionStore>>): void {
  describe(`SessionStore contract: ${name}`, () => {
    const store = freshStorePerTest(makeStore);
    const project: ProjectId = asProjectId('proj-one');
    const other: ProjectId = asProjectId('proj-two');

    async function start(userId = 'usr_a', hash = `h-${newId('')}`): Promise<{ sid: string; hash: string }> {
      const sid = newId('ses_');
      await store.create(project, { id: sid, user_id: userId, refresh_hash: hash, now: T0, expires_at: T0 + 30 * DAY });
      return { sid, hash };
    }

    function rotation(presented: string, next: string, now: number) {
      return { presented_hash: presented, next_hash: next, next_grace: `grace-of-${next}`, now, next_expires_at: now + 30 * DAY, grace_ms: GRACE };
    }

    it('a new session is active until it expires', async () => {
      const { sid } = await start();
      expect(await store.getActive(project, sid, T0 + 1)).toEqual({ id: sid, user_id: 'usr_a', created_at: T0, expires_at: T0 + 30 * DAY, aal: 1 });
      expect(await store.getActive(project, sid, T0 + 30 * DAY)).toBeNull();
      expect(await store.getActive(other, sid, T0 + 1)).toBeNull();
      expect(await store.getActive(project, 'ses_unknown', T0)).toBeNull();
    });

    it('rotating the active token activates the next one and moves the expiry', async () => {
      const { sid, hash } = await start();
      const r = await store.rotate(project, rotation(hash, 'h2', T0 + 1000));
      expect(r).toEqual({ outcome: 'rotated', session: { id: sid, user_id: 'usr_a', created_at: T0, expires_at: T0 + 1000 + 30 * DAY, aal: 1 } });
      const r2 = await store.rotate(project, rotation('h2', 'h3', T0 + 60_000));
      expect(r2.outcome).toBe('rotated');
      expect(await store.getActive(project, sid, T0 + 30 * DAY + 30_000)).not.toBeNull();
    });

    it('a session started at aal 2 keeps it through rotation, the grace window and reads', async () => {
      const sid = newId('ses_');
      await store.create(project, { id: sid, user_id: 'usr_a', refresh_hash: 'aal-h1', now: T0, expires_at: T0 + 30 * DAY, aal: 2 });
      expect(await store.getActive(project, sid, T0 + 1)).toMatchObject({ id: sid, aal: 2 });
      expect(await store.rotate(project, rotation('aal-h1', 'aal-h2', T0 + 1000))).toMatchObject({ outcome: 'rotated', session: { aal: 2 } });
      expect(await store.rotate(project, rotation('aal-h1', 'aal-hx', T0 + 2000))).toMatchObject({ outcome: 'grace', session: { aal: 2 } });
      expect(await store.rotate(project, rotation('aal-h2', 'aal-h3', T0 + 60_000))).toMatchObject({ outcome: 'rotated', session: { aal: 2 } });
      const { sid: one } = await start();
      expect(await store.getActive(project, one, T0 + 1)).toMatchObject({ aal: 1 });
    });

    it('reusing the immediate parent within the grace window hands back the grace blob and changes nothing', async () => {
      const { sid, hash } = await start();
      await store.rotate(project, rotation(hash, 'h2', T0 + 1000));
      const again = await store.rotate(project, rotation(hash, 'h2-other', T0 + 1000 + GRACE));
      expect(again).toEqual({ outcome: 'grace', session: expect.objectContaining({ id: sid }), grace: 'grace-of-h2' });
      // h2 is still the active token
      expect((await store.rotate(project, rotation('h2', 'h3', T0 + 20_000))).outcome).toBe('rotated');
      expect(await store.revocations.isRevoked(project, sid, Math.floor(T0 / 1000))).toBe(false);
    });

    it('reusing the parent after the grace window revokes the whole family', async () => {
      const { sid, hash } = await start();
      await store.rotate(project, rotation(hash, 'h2', T0 + 1000));
      const late = await store.rotate(project, rotation(hash, 'hx', T0 + 1001 + GRACE));
      expect(late).toEqual({ outcome: 'reused', session: expect.objectContaining({ id: sid }) });
      expect(await store.getActive(project, sid, T0 + 20_000)).toBeNull();
      expect((await store.rotate(project, rotation('h2', 'h3', T0 + 20_000))).outcome).toBe('invalid');
      expect(await store.revocations.isRevoked(project, sid, Math.floor(T0 / 1000))).toBe(true);
    });

    it('reusing an older ancestor revokes the family even within the grace window', async () => {
      const { sid, hash } = await start();
      await store.rotate(project, rotation(hash, 'h2', T0 + 1000));
      await store.rotate(project, rotation('h2', 'h3', T0 + 2000));
      expect((await store.rotate(project, rotation(hash, 'hx', T0 + 3000))).outcome).toBe('reused');
      expect(await store.getActive(project, sid, T0 + 3000)).toBeNull();
    });

    it('of two racing rotations of the same token exactly one rotates', async () => {
      const { hash } = await start();
      const outcomes = await Promise.all([
        store.rotate(project, rotation(hash, 'ra', T0 + 1000)),
        store.rotate(project, rotation(hash, 'rb', T0 + 1000)),
      ]);
      expect(outcomes.map((o) => o.outcome).sort()).toEqual(['grace', 'rotated']);
    });

    it('unknown, expired and other-project tokens are invalid', async () => {
      const { hash } = await start();
      expect(await store.rotate(project, rotation('nope', 'n2', T0))).toEqual({ outcome: 'invalid' });
      expect(await store.rotate(other, rotation(hash, 'n2', T0))).toEqual({ outcome: 'invalid' });
      expect(await store.rotate(project, rotation(hash, 'n2', T0 + 30 * DAY))).toEqual({ outcome: 'invalid' });
    });

    it('revoking by refresh token ends the session and is visible to the revocation checker', async () => {
      const { sid, hash } = await start();
      // The same sid in another project is another session.
      await store.create(other, { id: sid, user_id: 'usr_a', refresh_hash: `o-${hash}`, now: T0, expires_at: T0 + 30 * DAY });
      const iat = Math.floor(T0 / 1000);
      expect(await store.revocations.isRevoked(project, sid, iat)).toBe(false);
      expect(await store.revokeByRefreshHash(project, hash, T0 + 5000)).toBe(true);
      expect(await store.getActive(project, sid, T0 + 5000)).toBeNull();
      expect(await store.revocations.isRevoked(project, sid, iat)).toBe(true);
      expect(await store.revocations.isRevoked(other, sid, iat)).toBe(false);
      expect(await store.rotate(project, rotation(hash, 'n2', T0 + 6000))).toEqual({ outcome: 'invalid' });
      expect(await store.revokeByRefreshHash(project, 'unknown', T0)).toBe(false);
    });

    it('revoke ends one session; a second revoke reports it was not live', async () => {
      const a = await start();
      const b = await start();
      expect(await store.revoke(project, a.sid, T0 + 1)).toBe(true);
      expect(await store.revoke(project, a.sid, T0 + 2)).toBe(false);
      expect(await store.getActive(project, a.sid, T0 + 3)).toBeNull();
      expect(await store.getActive(project, b.sid, T0 + 3)).not.toBeNull();
    });

    it("revokeUser ends every session of that user and no one else's", async () => {
      const a1 = await start('usr_a');
      const a2 = await start('usr_a');
      const b = await start('usr_b');
      expect(await store.revokeUser(project, 'usr_a', T0 + 10)).toBe(2);
      expect(await store.getActive(project, a1.sid, T0 + 11)).toBeNull();
      expect(await store.getActive(project, a2.sid, T0 + 11)).toBeNull();
      expect(await store.getActive(project, b.sid, T0 + 11)).not.toBeNull();
      expect(await store.revocations.isRevoked(project, a2.sid, Math.floor(T0 / 1000))).toBe(true);
      expect(await store.revocations.isRevoked(project, b.sid, Math.floor(T0 / 1000))).toBe(false);
      expect(await store.revokeUser(project, 'usr_a', T0 + 12)).toBe(0);
    });

    it('a revocation refuses tokens issued before it, not a later iat', async () => {
      const { sid } = await start();
      await store.revoke(project, sid, T0 + 10_000);
      expect(await store.revocations.isRevoked(project, sid, Math.floor(T0 / 1000) + 10)).toBe(true);
      expect(await store.revocations.isRevoked(project, sid, Math.floor(T0 / 1000) + 11)).toBe(false);
    });

    it('purgeProject revokes the live sessions, forgets every family, and leaves other projects alone', async () => {
      const a = await start('usr_a');
      const b = await start('usr_b');
      const elsewhere = newId('ses_');
      await store.create(other, { id: elsewhere, user_id: 'usr_a', refresh_hash: 'h-elsewhere', now: T0, expires_at: T0 + 30 * DAY });
      await store.purgeProject(project, T0 + 5_000);
      await store.purgeProject(project, T0 + 6_000);
      const iat = Math.floor(T0 / 1000);
      for (const s of [a, b]) {
        expect(await store.getActive(project, s.sid, T0 + 10_000)).toBeNull();
        expect(await store.revocations.isRevoked(project, s.sid, iat)).toBe(true);
        expect(await store.rotate(project, rotation(s.hash, `${s.hash}-next`, T0 + 10_000))).toEqual({ outcome: 'invalid' });
      }
      expect(await store.revokeUser(project, 'usr_a', T0 + 10_000)).toBe(0);
      expect(await store.getActive(other, elsewhere, T0 + 10_000)).toMatchObject({ id: elsewhere });
      expect(await store.revocations.isRevoked(other, elsewhere, iat)).toBe(false);
    });
  });
}
