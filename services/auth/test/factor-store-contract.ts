import { asProjectId, type ProjectId } from '@plinth/shared';
import { newUserRecord } from '../src/domain/new-user';
import type { TotpFactor } from '../src/store/factor-store';
import type { UserStore } from '../src/store/user-store';

const T0 = Date.UTC(2030, 0, 1);
const MIN = 60_000;

function pending(userId: string, sealed = `sealed-${userId}`): TotpFactor {
  return { user_id: userId, secret_sealed: sealed, status: 'pending', created_at: T0, confirmed_at: null, last_step: -1, recovery_hashes: [] };
}

/**
 * The guarantees of the FactorStore port (src/store/factor-store.ts), reached through
 * `UserStore.factors` of every adapter, and how users and projects take their factors with them.
 * Called inside describeUserStoreContract with its per-test store.
 */
export function describeFactorStoreContract(store: UserStore): void {
  describe('second factors and challenges', () => {
    const project: ProjectId = asProjectId('proj-one');
    const other: ProjectId = asProjectId('proj-two');

    it('a pending factor is replaced by a new enrollment; once active, enrollment is refused until it is deleted', async () => {
      expect(await store.factors.getFactor(project, 'usr_a')).toBeNull();
      expect(await store.factors.putPendingFactor(project, pending('usr_a', 's1'))).toBe(true);
      expect(await store.factors.putPendingFactor(project, pending('usr_a', 's2'))).toBe(true);
      expect(await store.factors.getFactor(project, 'usr_a')).toEqual(pending('usr_a', 's2'));
      expect(await store.factors.getFactor(other, 'usr_a')).toBeNull();
      // Only the secret the code was checked against activates.
      expect(await store.factors.activateFactor(project, 'usr_a', 's1', 100, ['r1', 'r2'], T0 + MIN)).toBe(false);
      expect(await store.factors.activateFactor(project, 'usr_a', 's2', 100, ['r1', 'r2'], T0 + MIN)).toBe(true);
      expect(await store.factors.activateFactor(project, 'usr_a', 's2', 101, ['r3'], T0 + MIN)).toBe(false);
      expect(await store.factors.getFactor(project, 'usr_a')).toEqual({
        ...pending('usr_a', 's2'), status: 'active', confirmed_at: T0 + MIN, last_step: 100, recovery_hashes: ['r1', 'r2'],
      });
      expect(await store.factors.putPendingFactor(project, pending('usr_a', 's3'))).toBe(false);
      expect((await store.factors.getFactor(project, 'usr_a'))?.secret_sealed).toBe('s2');
      expect(await store.factors.deleteFactor(project, 'usr_a')).toBe(true);
      expect(await store.factors.deleteFactor(project, 'usr_a')).toBe(false);
      expect(await store.factors.putPendingFactor(project, pending('usr_a', 's4'))).toBe(true);
    });

    it('a time step is accepted once and never one at or before the last used; a pending factor accepts none', async () => {
      await store.factors.putPendingFactor(project, pending('usr_a', 's'));
      expect(await store.factors.useStep(project, 'usr_a', 5)).toBe(false);
      await store.factors.activateFactor(project, 'usr_a', 's', 10, [], T0);
      expect(await store.factors.useStep(project, 'usr_a', 10)).toBe(false);
      expect(await store.factors.useStep(project, 'usr_a', 9)).toBe(false);
      expect(await store.factors.useStep(project, 'usr_a', 11)).toBe(true);
      expect(await store.factors.useStep(project, 'usr_a', 11)).toBe(false);
      const racing = await Promise.all([store.factors.useStep(project, 'usr_a', 12), store.factors.useStep(project, 'usr_a', 12)]);
      expect(racing.filter(Boolean)).toHaveLength(1);
      expect(await store.factors.useStep(other, 'usr_a', 13)).toBe(false);
    });

    it('a recovery code is spent once; the others stay', async () => {
      await store.factors.putPendingFactor(project, pending('usr_a', 's'));
      expect(await store.factors.useRecoveryCode(project, 'usr_a', 'r1')).toBe(false);
      await store.factors.activateFactor(project, 'usr_a', 's', 1, ['r1', 'r2', 'r3'], T0);
      const racing = await Promise.all([store.factors.useRecoveryCode(project, 'usr_a', 'r1'), store.factors.useRecoveryCode(project, 'usr_a', 'r1')]);
      expect(racing.filter(Boolean)).toHaveLength(1);
      expect(await store.factors.useRecoveryCode(project, 'usr_a', 'r1')).toBe(false);
      expect(await store.factors.useRecoveryCode(other, 'usr_a', 'r2')).toBe(false);
      expect((await store.factors.getFactor(project, 'usr_a'))?.recovery_hashes).toEqual(['r2', 'r3']);
    });

    it('a challenge takes a bounded number of attempts, expires, and is taken once', async () => {
      await store.factors.putChallenge(project, { hash: 'c1', user_id: 'usr_a', expires_at: T0 + 5 * MIN });
      expect(await store.factors.attemptChallenge(other, 'c1', T0, 3)).toBeNull();
      for (let i = 0; i < 3; i++) expect(await store.factors.attemptChallenge(project, 'c1', T0, 3)).toBe('usr_a');
      expect(await store.factors.attemptChallenge(project, 'c1', T0, 3)).toBeNull();
      expect(await store.factors.takeChallenge(project, 'c1', T0 + 5 * MIN)).toBeNull(); // expired (and gone)
      await store.factors.putChallenge(project, { hash: 'c2', user_id: 'usr_a', expires_at: T0 + 5 * MIN });
      expect(await store.factors.attemptChallenge(project, 'c2', T0 + 5 * MIN, 3)).toBeNull();
      const racing = await Promise.all([store.factors.takeChallenge(project, 'c2', T0), store.factors.takeChallenge(project, 'c2', T0)]);
      expect(racing).toEqual(expect.arrayContaining(['usr_a', null]));
      expect(await store.factors.attemptChallenge(project, 'c2', T0, 3)).toBeNull();
    });

    it('deleting the user deletes their factor and challenges; purging the project deletes every one of it', async () => {
      const u = newUserRecord('mfa@example.com', {}, T0);
      await store.createUser(project, u);
      await store.factors.putPendingFactor(project, pending(u.id, 's'));
      await store.factors.activateFactor(project, u.id, 's', 1, ['r1'], T0);
      await store.factors.putChallenge(project, { hash: 'cu', user_id: u.id, expires_at: T0 + MIN });
      expect(await store.deleteUser(project, u.id)).toBe(true);
      expect(await store.factors.getFactor(project, u.id)).toBeNull();
      expect(await store.factors.takeChallenge(project, 'cu', T0)).toBeNull();

      for (const p of [project, other]) {
        await store.factors.putPendingFactor(p, pending('usr_b', 's'));
        await store.factors.putChallenge(p, { hash: 'cp', user_id: 'usr_b', expires_at: T0 + MIN });
      }
      await store.purgeProject(project);
      expect(await store.factors.getFactor(project, 'usr_b')).toBeNull();
      expect(await store.factors.takeChallenge(project, 'cp', T0)).toBeNull();
      expect(await store.factors.getFactor(other, 'usr_b')).not.toBeNull();
      expect(await store.factors.takeChallenge(other, 'cp', T0)).toBe('usr_b');
    });
  });
}
